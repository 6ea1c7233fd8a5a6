/**
 * Hole punching for real: two private networks behind NAT (network namespaces, veth pairs, an
 * nf_tables masquerade rule installed through netlink by testing/nftMasquerade.py, since a fresh
 * machine has no `iptables`/`nft`) and a relay on the "internet" between them. The "internet" uses
 * public-looking addresses (11.77.0.0/16, unreachable from the isolated namespaces anyway) because
 * libp2p and DCUtR ignore private ones. The buyer reaches the seller through the relay, DCUtR
 * upgrades the connection to a direct one, and a request is served on it (decision 141). Needs
 * root, `ip` and `python3`; without them this test FAILS saying so — it never passes silently.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';

const NODE = process.execPath;
const PEER = new URL('./testing/netnsPeer.ts', import.meta.url).pathname;
const MASQUERADE = new URL('./testing/nftMasquerade.py', import.meta.url).pathname;
const PREFIX = `svchp${process.pid % 10000}`;
const NS = {
  inet: `${PREFIX}i`,
  natA: `${PREFIX}ra`,
  hostA: `${PREFIX}ha`,
  natB: `${PREFIX}rb`,
  hostB: `${PREFIX}hb`,
};

/** What this machine lacks for the test, or an empty list. */
function missingPrerequisites(): string[] {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push('root (network namespaces and NAT rules need it)');
  const has = (command: string, args: string[]) => {
    try {
      execFileSync(command, args, { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (!has('ip', ['netns', 'list'])) missing.push('the `ip` command with netns support (iproute2)');
  if (!has('python3', ['--version'])) {
    missing.push('`python3` (it installs the NAT rules through netlink: testing/nftMasquerade.py)');
  }
  return missing;
}

const run = (...args: string[]) => execFileSync(args[0]!, args.slice(1), { stdio: 'pipe' });
const inNs = (ns: string, ...args: string[]) => run('ip', 'netns', 'exec', ns, ...args);

/** inet: 11.77.0.0/16 "internet" with the relay; behind each router a 192.168.x.0/24 LAN. */
function buildTopology(): void {
  for (const ns of Object.values(NS)) run('ip', 'netns', 'add', ns);
  for (const ns of Object.values(NS)) inNs(ns, 'ip', 'link', 'set', 'lo', 'up');
  inNs(NS.inet, 'ip', 'link', 'add', 'br0', 'type', 'bridge');
  inNs(NS.inet, 'ip', 'addr', 'add', '11.77.0.1/16', 'dev', 'br0');
  inNs(NS.inet, 'ip', 'link', 'set', 'br0', 'up');
  const sides = [
    { router: NS.natA, host: NS.hostA, wan: '11.77.1.1', lan: '192.168.71' },
    { router: NS.natB, host: NS.hostB, wan: '11.77.2.1', lan: '192.168.72' },
  ];
  sides.forEach((side, i) => {
    const wanOut = `${PREFIX}w${i}`;
    const lanOut = `${PREFIX}l${i}`;
    run('ip', 'link', 'add', wanOut, 'type', 'veth', 'peer', 'name', `${wanOut}p`);
    run('ip', 'link', 'set', wanOut, 'netns', NS.inet);
    run('ip', 'link', 'set', `${wanOut}p`, 'netns', side.router);
    inNs(NS.inet, 'ip', 'link', 'set', wanOut, 'master', 'br0');
    inNs(NS.inet, 'ip', 'link', 'set', wanOut, 'up');
    inNs(side.router, 'ip', 'addr', 'add', `${side.wan}/16`, 'dev', `${wanOut}p`);
    inNs(side.router, 'ip', 'link', 'set', `${wanOut}p`, 'up');
    run('ip', 'link', 'add', lanOut, 'type', 'veth', 'peer', 'name', `${lanOut}p`);
    run('ip', 'link', 'set', lanOut, 'netns', side.router);
    run('ip', 'link', 'set', `${lanOut}p`, 'netns', side.host);
    inNs(side.router, 'ip', 'addr', 'add', `${side.lan}.1/24`, 'dev', lanOut);
    inNs(side.router, 'ip', 'link', 'set', lanOut, 'up');
    inNs(side.host, 'ip', 'addr', 'add', `${side.lan}.2/24`, 'dev', `${lanOut}p`);
    inNs(side.host, 'ip', 'link', 'set', `${lanOut}p`, 'up');
    inNs(side.host, 'ip', 'route', 'add', 'default', 'via', `${side.lan}.1`);
    inNs(side.router, 'sysctl', '-qw', 'net.ipv4.ip_forward=1');
    inNs(side.router, 'python3', MASQUERADE, `${wanOut}p`);
  });
}

function tearDown(): void {
  const attempt = (...args: string[]) => {
    try {
      run(...args);
    } catch {
      // not created, or already gone with its namespace
    }
  };
  for (const ns of Object.values(NS)) attempt('ip', 'netns', 'del', ns);
  // A veth pair still in the root namespace (setup failed before moving it) goes here.
  for (const i of [0, 1])
    for (const kind of ['w', 'l']) attempt('ip', 'link', 'del', `${PREFIX}${kind}${i}`);
}

const children: ReturnType<typeof spawn>[] = [];

/** Starts a peer in `ns` and resolves with its first JSON line. */
function startPeer(
  ns: string,
  args: string[],
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const child = spawn('ip', ['netns', 'exec', ns, NODE, '--import', 'tsx', PEER, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, SVC_HOLE_PUNCH_PORT: '4002' },
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${args[0]} in ${ns} said nothing`)),
      timeoutMs,
    );
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve(JSON.parse(line) as Record<string, unknown>);
    });
  });
}

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  tearDown();
});

describe('hole punching between two NATs (network namespaces)', () => {
  it('upgrades a relayed buyer-seller connection to a direct one and serves on it', async () => {
    const missing = missingPrerequisites();
    if (missing.length > 0) {
      throw new Error(`this test needs ${missing.join(', ')}; it cannot run on this machine`);
    }
    buildTopology();
    const relay = await startPeer(NS.inet, ['relay', '11.77.0.1'], 30_000);
    const relayAddr = (relay.multiaddrs as string[]).find((a) => a.startsWith('/ip4/11.77.0.1/'))!;
    expect(relayAddr).toBeDefined();
    const seller = await startPeer(NS.hostA, ['seller', relayAddr], 60_000);
    expect(seller.reachability).toMatchObject({ mode: 'relayed' });
    const result = await startPeer(
      NS.hostB,
      ['buyer', relayAddr, seller.peerId as string],
      120_000,
    );
    expect(result.error).toBeUndefined();
    expect(result.first).toMatchObject({ status: 200 });
    // The buyer reached the seller through the relay first, then directly at the public address
    // of the seller's router (its LAN address is unreachable from the other LAN), and the
    // second request was served with the direct connection open.
    const opened = result.opened as string[];
    expect(opened[0]).toContain('/p2p-circuit');
    expect(opened.some((a) => a.startsWith('/ip4/11.77.1.1/tcp/4002/'))).toBe(true);
    expect((result.after as string[]).some((a) => a.startsWith('/ip4/11.77.1.1/tcp/'))).toBe(true);
    expect(result.second).toMatchObject({ status: 200 });
  }, 240_000);
});
