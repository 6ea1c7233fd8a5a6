#!/usr/bin/env python3
"""Make the current network namespace a home router, without `nft` or `iptables`.

Usage: python3 nftMasquerade.py <outgoing interface>
       (run inside a namespace with `ip netns exec <ns> python3 nftMasquerade.py <dev>`)

The hole-punching test (src/network/holePunch.netns.test.ts) turns a namespace into a home
router. A fresh Linux machine has nf_tables in its kernel but often neither the `nft` nor the
`iptables` program, so this script sends the netlink messages that

    nft add table ip svcnat
    nft add chain ip svcnat postrouting '{ type nat hook postrouting priority 100; }'
    nft add rule ip svcnat postrouting oifname <dev> masquerade
    nft add chain ip svcnat input '{ type filter hook input priority 0; }'
    nft add rule ip svcnat input iifname <dev> drop

would send, in one nfnetlink batch (all or nothing), and exits non-zero with the kernel's error
otherwise. The first rule is the NAT: connections from the LAN leave with the router's address
(Linux keeps the source port when it is free). The second makes the router silent, as home
routers are: a packet from the internet that belongs to no connection the LAN opened is dropped
instead of answered with a TCP reset. Hole punching depends on that: the first SYN of a
simultaneous open reaches the other NAT before that NAT has seen its own side's SYN; a reset
would kill the attempt, a drop lets the retransmitted SYN through once both sides have sent. Standard library only. Message layout: the Linux uapi headers
<linux/netlink.h>, <linux/netfilter/nfnetlink.h> and <linux/netfilter/nf_tables.h>.
"""

import os
import socket
import struct
import sys

# <linux/netlink.h>
NETLINK_NETFILTER = 12
NLM_F_REQUEST = 0x01
NLM_F_ACK = 0x04
NLM_F_EXCL = 0x200
NLM_F_CREATE = 0x400
NLM_F_APPEND = 0x800
NLMSG_ERROR = 0x2
NLA_F_NESTED = 0x8000

# <linux/netfilter/nfnetlink.h>: a batch is framed by BEGIN/END messages whose nfgenmsg.res_id
# names the subsystem; the kernel applies every message between them in one transaction.
NFNL_MSG_BATCH_BEGIN = 0x10
NFNL_MSG_BATCH_END = 0x11
NFNL_SUBSYS_NFTABLES = 10
NFPROTO_UNSPEC = 0
NFPROTO_IPV4 = 2

# <linux/netfilter/nf_tables.h>: message types (enum nf_tables_msg_types) ...
NFT_MSG_NEWTABLE = 0
NFT_MSG_NEWCHAIN = 3
NFT_MSG_NEWRULE = 6
NF_DROP = 0  # <linux/netfilter.h>
# ... and attribute numbers of each object (enum nft_*_attributes).
NFTA_TABLE_NAME = 1
NFTA_CHAIN_TABLE = 1
NFTA_CHAIN_NAME = 3
NFTA_CHAIN_HOOK = 4
NFTA_CHAIN_TYPE = 7
NFTA_HOOK_HOOKNUM = 1
NFTA_HOOK_PRIORITY = 2
NFTA_RULE_TABLE = 1
NFTA_RULE_CHAIN = 2
NFTA_RULE_EXPRESSIONS = 4
NFTA_LIST_ELEM = 1
NFTA_EXPR_NAME = 1
NFTA_EXPR_DATA = 2
NFTA_META_DREG = 1
NFTA_META_KEY = 2
NFT_META_IIFNAME = 6
NFT_META_OIFNAME = 7
NFTA_CMP_SREG = 1
NFTA_CMP_OP = 2
NFTA_CMP_DATA = 3
NFT_CMP_EQ = 0
NFTA_DATA_VALUE = 1
NFTA_DATA_VERDICT = 2
NFTA_VERDICT_CODE = 1
NFTA_IMMEDIATE_DREG = 1
NFTA_IMMEDIATE_DATA = 2
NFT_REG_VERDICT = 0
NFT_REG_1 = 1  # a 16-byte register: an interface name (IFNAMSIZ) fits
IFNAMSIZ = 16

# <linux/netfilter_ipv4.h>: hooks, and the priorities `nft` uses for "type nat hook postrouting"
# and "type filter hook input".
NF_INET_LOCAL_IN = 1
NF_INET_POST_ROUTING = 4
NF_IP_PRI_NAT_SRC = 100
NF_IP_PRI_FILTER = 0

TABLE = b"svcnat\0"


def attr(kind: int, payload: bytes) -> bytes:
    """One netlink attribute (struct nlattr), padded to 4 bytes."""
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * (-length % 4)


def nested(kind: int, *children: bytes) -> bytes:
    return attr(kind | NLA_F_NESTED, b"".join(children))


def be32(kind: int, value: int) -> bytes:
    """nf_tables reads every 32-bit attribute in network byte order (nla_get_be32)."""
    return attr(kind, struct.pack("!i", value))


def expression(name: bytes, *data: bytes) -> bytes:
    return nested(NFTA_LIST_ELEM, attr(NFTA_EXPR_NAME, name + b"\0"), nested(NFTA_EXPR_DATA, *data))


def message(kind: int, flags: int, seq: int, family: int, res_id: int, body: bytes) -> bytes:
    """struct nlmsghdr + struct nfgenmsg (family, version 0, big-endian res_id) + attributes."""
    payload = struct.pack("!BBH", family, 0, res_id) + body
    return struct.pack("=IHHII", 16 + len(payload), kind, flags, seq, 0) + payload


def nft(kind: int, flags: int, seq: int, body: bytes) -> bytes:
    return message(
        (NFNL_SUBSYS_NFTABLES << 8) | kind,
        NLM_F_REQUEST | NLM_F_ACK | flags,
        seq,
        NFPROTO_IPV4,
        0,
        body,
    )


def base_chain(seq: int, name: bytes, kind: bytes, hook: int, priority: int) -> bytes:
    return nft(
        NFT_MSG_NEWCHAIN,
        NLM_F_CREATE,
        seq,
        attr(NFTA_CHAIN_TABLE, TABLE)
        + attr(NFTA_CHAIN_NAME, name)
        + nested(NFTA_CHAIN_HOOK, be32(NFTA_HOOK_HOOKNUM, hook), be32(NFTA_HOOK_PRIORITY, priority))
        + attr(NFTA_CHAIN_TYPE, kind),
    )


def interface_rule(seq: int, chain: bytes, key: int, device: bytes, action: bytes) -> bytes:
    """A rule: load the in/out interface name into register 1, stop unless it equals `device`
    (zero-padded to IFNAMSIZ, as `nft` sends it for an exact match), then run `action`."""
    return nft(
        NFT_MSG_NEWRULE,
        NLM_F_CREATE | NLM_F_APPEND,
        seq,
        attr(NFTA_RULE_TABLE, TABLE)
        + attr(NFTA_RULE_CHAIN, chain)
        + nested(
            NFTA_RULE_EXPRESSIONS,
            expression(b"meta", be32(NFTA_META_KEY, key), be32(NFTA_META_DREG, NFT_REG_1)),
            expression(
                b"cmp",
                be32(NFTA_CMP_SREG, NFT_REG_1),
                be32(NFTA_CMP_OP, NFT_CMP_EQ),
                nested(NFTA_CMP_DATA, attr(NFTA_DATA_VALUE, device.ljust(IFNAMSIZ, b"\0"))),
            ),
            action,
        ),
    )


def router_batch(device: str) -> tuple[bytes, list[int]]:
    """The batch, and the sequence numbers the kernel acknowledges one by one."""
    name = device.encode()
    if not 0 < len(name) < IFNAMSIZ:
        raise ValueError(f"not an interface name: {device!r}")
    masquerade = expression(b"masq")
    # `drop` is an immediate verdict written to the verdict register.
    drop = expression(
        b"immediate",
        be32(NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT),
        nested(NFTA_IMMEDIATE_DATA, nested(NFTA_DATA_VERDICT, be32(NFTA_VERDICT_CODE, NF_DROP))),
    )
    messages = [
        nft(NFT_MSG_NEWTABLE, NLM_F_CREATE, 2, attr(NFTA_TABLE_NAME, TABLE)),
        base_chain(3, b"postrouting\0", b"nat\0", NF_INET_POST_ROUTING, NF_IP_PRI_NAT_SRC),
        interface_rule(4, b"postrouting\0", NFT_META_OIFNAME, name, masquerade),
        base_chain(5, b"input\0", b"filter\0", NF_INET_LOCAL_IN, NF_IP_PRI_FILTER),
        interface_rule(6, b"input\0", NFT_META_IIFNAME, name, drop),
    ]
    begin = message(NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, 1, NFPROTO_UNSPEC, NFNL_SUBSYS_NFTABLES, b"")
    end = message(NFNL_MSG_BATCH_END, NLM_F_REQUEST, 7, NFPROTO_UNSPEC, NFNL_SUBSYS_NFTABLES, b"")
    return begin + b"".join(messages) + end, [2, 3, 4, 5, 6]


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    batch, pending = router_batch(sys.argv[1])
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER) as sock:
        sock.settimeout(5)
        sock.bind((0, 0))
        sock.sendto(batch, (0, 0))
        # Each message asked for an ACK: an NLMSG_ERROR carrying errno 0 (success) or -errno.
        while pending:
            data = sock.recv(65536)
            offset = 0
            while offset + 16 <= len(data):
                length, kind, _flags, seq, _pid = struct.unpack_from("=IHHII", data, offset)
                if kind == NLMSG_ERROR:
                    (error,) = struct.unpack_from("=i", data, offset + 16)
                    if error != 0:
                        print(f"nf_tables refused message {seq}: {os.strerror(-error)}", file=sys.stderr)
                        return 1
                    if seq in pending:
                        pending.remove(seq)
                offset += max(length + (-length % 4), 16)
    return 0


if __name__ == "__main__":
    sys.exit(main())
