/** `/svc/voucher/1` between two real libp2p nodes on loopback. */
import { multiaddr } from '@multiformats/multiaddr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PeerRouter, SvcNode } from '../../network/index.js';
import { startLoopbackNode } from '../../network/testing/loopback.js';
import {
  decodeVoucherMessage,
  encodeVoucherReply,
  MAX_VOUCHER_MESSAGE_BYTES,
  VOUCHER_PROTOCOL,
  type VoucherMessage,
} from '../wire.js';
import { sendVoucher, serveVouchers } from './voucherProtocol.js';

const VOUCHER: VoucherMessage = {
  v: 1,
  channelId: `0x${'ab'.repeat(32)}`,
  requestId: 'req-1',
  amountMicro: '1234',
  cumulativeAmount: '5678',
  signature: `0x${'cd'.repeat(65)}`,
};

describe('/svc/voucher/1', () => {
  let seller: SvcNode;
  let buyer: SvcNode;
  let router: PeerRouter;
  const received: Uint8Array[] = [];

  beforeAll(async () => {
    seller = await startLoopbackNode('seller');
    buyer = await startLoopbackNode('buyer');
    await serveVouchers(seller, async (bytes) => {
      received.push(bytes);
      decodeVoucherMessage(bytes);
      return encodeVoucherReply({ v: 1, ok: true });
    });
    router = {
      route: (peerId) =>
        peerId === seller.peerId
          ? {
              libp2pPeerId: seller.libp2pPeerId,
              addresses: seller.multiaddrs().map((address) => multiaddr(address)),
              uploadLimitBytes: 1024,
            }
          : undefined,
    };
    await buyer.libp2p.peerStore.merge(seller.libp2pPeerId, {
      multiaddrs: seller.multiaddrs().map((address) => multiaddr(address)),
    });
  }, 60_000);

  afterAll(async () => {
    await buyer?.stop();
    await seller?.stop();
  });

  it('delivers one voucher and returns the seller reply', async () => {
    const reply = await sendVoucher(buyer, router, seller.peerId, VOUCHER);
    expect(reply).toEqual({ v: 1, ok: true });
    expect(decodeVoucherMessage(received.at(-1)!)).toEqual(VOUCHER);
  });

  it('fails without a route to the seller', async () => {
    await expect(sendVoucher(buyer, router, 'ef'.repeat(20), VOUCHER)).rejects.toThrow(/no route/);
  });

  it('drops a stream larger than a voucher message before the handler sees it', async () => {
    const before = received.length;
    const stream = await buyer.libp2p.dialProtocol(seller.libp2pPeerId, VOUCHER_PROTOCOL);
    const reply: Uint8Array[] = [];
    stream.addEventListener('message', (event) => {
      reply.push(event.data instanceof Uint8Array ? event.data : event.data.subarray());
    });
    const closed = new Promise<void>((resolve) =>
      stream.addEventListener('close', () => resolve()),
    );
    stream.send(new Uint8Array(MAX_VOUCHER_MESSAGE_BYTES + 100).fill(65));
    await stream.close().catch(() => undefined);
    await closed;
    expect(reply).toEqual([]);
    expect(received.length).toBe(before);
  });
});
