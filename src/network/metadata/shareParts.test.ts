/** Records received as bytes share their equal prices and protocol lists; nothing else changes. */
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { peerIdFromAddress } from '../../identity/index.js';
import type { PeerMetadata } from '../types.js';
import { encodeMetadata, signMetadata, verifyMetadata } from './sign.js';

const NOW = 1_800_000_000_000;

async function signedBy(key: string, cheap: number): Promise<PeerMetadata> {
  const account = privateKeyToAccount(`0x${key.repeat(32)}`);
  return signMetadata(
    {
      peerId: peerIdFromAddress(account.address),
      version: 1,
      displayName: `seller ${key}`,
      providers: [
        {
          provider: 'openai',
          services: ['a', 'b', 'c'],
          defaultPricing: { inputUsdPerMillion: 1.5, outputUsdPerMillion: 2 },
          servicePricing: {
            a: { inputUsdPerMillion: cheap, outputUsdPerMillion: 2 },
            b: { inputUsdPerMillion: cheap + 1, outputUsdPerMillion: 2 },
          },
          serviceApiProtocols: {
            a: ['openai-chat-completions'],
            b: ['openai-chat-completions', 'openai-responses'],
            c: ['openai-chat-completions'],
          },
          maxConcurrency: 4,
          currentLoad: 0,
        },
      ],
      capabilities: { uploadLimitBytes: 1024 },
      timestamp: NOW,
    },
    account,
  );
}

async function received(record: PeerMetadata): Promise<PeerMetadata> {
  const verdict = await verifyMetadata(encodeMetadata(record), { now: NOW });
  if (!verdict.ok) throw new Error(verdict.message);
  return verdict.metadata;
}

describe('shared record parts', () => {
  it('shares equal prices and protocol lists between records, keeping each record as signed', async () => {
    const [one, two, three] = await Promise.all([
      signedBy('11', 0.5),
      signedBy('22', 0.5),
      signedBy('33', 0.7),
    ]);
    const [a, b, c] = [await received(one), await received(two), await received(three)];
    for (const [got, sent] of [
      [a, one],
      [b, two],
      [c, three],
    ] as const) {
      expect(JSON.stringify(got)).toBe(new TextDecoder().decode(encodeMetadata(sent)));
      expect((await verifyMetadata(got, { now: NOW })).ok).toBe(true);
    }
    const [pa, pb, pc] = [a, b, c].map((record) => record.providers[0]!);
    expect(pa!.servicePricing!.a).toBe(pb!.servicePricing!.a);
    expect(pa!.servicePricing!.a).not.toBe(pa!.servicePricing!.b);
    expect(pa!.servicePricing!.a).not.toBe(pc!.servicePricing!.a);
    expect(pa!.defaultPricing).toBe(pc!.defaultPricing);
    expect(pa!.serviceApiProtocols!.a).toBe(pa!.serviceApiProtocols!.c);
    expect(pa!.serviceApiProtocols!.b).toBe(pc!.serviceApiProtocols!.b);
    expect(Object.isFrozen(pa!.serviceApiProtocols!.a)).toBe(true);
  });

  it('leaves a record passed as a value untouched (the caller still holds its parts)', async () => {
    const record = await signedBy('44', 0.5);
    const verdict = await verifyMetadata(record, { now: NOW });
    expect(verdict.ok).toBe(true);
    expect(Object.isFrozen(record.providers[0]!.defaultPricing)).toBe(false);
  });
});
