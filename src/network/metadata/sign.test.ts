import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { peerIdFromAddress } from '../../identity/index.js';
import type { PeerMetadata, UnsignedPeerMetadata } from '../types.js';
import { encodeMetadata, signMetadata, verifyMetadata } from './sign.js';

const account = privateKeyToAccount(`0x${'11'.repeat(32)}`);
const other = privateKeyToAccount(`0x${'22'.repeat(32)}`);
const NOW = 1_800_000_000_000;

function record(overrides: Partial<UnsignedPeerMetadata> = {}): UnsignedPeerMetadata {
  return {
    peerId: peerIdFromAddress(account.address),
    version: 1,
    displayName: 'test seller',
    providers: [
      {
        provider: 'openai',
        services: ['gpt-4o-mini'],
        defaultPricing: {
          inputUsdPerMillion: 0.15,
          outputUsdPerMillion: 0.6,
          cachedInputUsdPerMillion: 0.075,
        },
        serviceApiProtocols: { 'gpt-4o-mini': ['openai-chat-completions'] },
        maxConcurrency: 4,
        currentLoad: 1,
      },
    ],
    capabilities: { uploadLimitBytes: 1024 },
    timestamp: NOW,
    ...overrides,
  };
}

async function signed(overrides: Partial<UnsignedPeerMetadata> = {}): Promise<PeerMetadata> {
  return signMetadata(record(overrides), account);
}

describe('peer metadata signatures', () => {
  it('accepts a signed record, as bytes or parsed', async () => {
    const metadata = await signed();
    const fromBytes = await verifyMetadata(encodeMetadata(metadata), { now: NOW });
    expect(fromBytes).toEqual({ ok: true, metadata });
    const parsed = await verifyMetadata(JSON.parse(JSON.stringify(metadata)), {
      now: NOW,
      expectedPeerId: metadata.peerId,
    });
    expect(parsed.ok).toBe(true);
  });

  it('rejects a record whose price was changed after signing', async () => {
    const metadata = await signed();
    const tampered = structuredClone(metadata);
    tampered.providers[0]!.defaultPricing.outputUsdPerMillion = 0.01;
    const verdict = await verifyMetadata(tampered, { now: NOW });
    expect(verdict).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('rejects a record signed by another key', async () => {
    const forged = await signMetadata(record({ peerId: peerIdFromAddress(other.address) }), other);
    const verdict = await verifyMetadata(
      { ...forged, peerId: peerIdFromAddress(account.address) },
      { now: NOW },
    );
    expect(verdict).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('rejects a record for another peer than the connection', async () => {
    const verdict = await verifyMetadata(await signed(), {
      now: NOW,
      expectedPeerId: peerIdFromAddress(other.address),
    });
    expect(verdict).toMatchObject({ ok: false, reason: 'wrong_peer' });
  });

  it('rejects stale replays and future-dated records', async () => {
    const metadata = await signed();
    expect(await verifyMetadata(metadata, { now: NOW + 31 * 60_000 })).toMatchObject({
      reason: 'stale',
    });
    expect(await verifyMetadata(metadata, { now: NOW - 6 * 60_000 })).toMatchObject({
      reason: 'future',
    });
    expect((await verifyMetadata(metadata, { now: NOW + 29 * 60_000 })).ok).toBe(true);
  });

  it('refuses to sign for another peer id', async () => {
    await expect(
      signMetadata(record({ peerId: peerIdFromAddress(other.address) }), account),
    ).rejects.toThrow(/is not the signer/);
  });
});

describe('peer metadata limits', () => {
  const pricing = { inputUsdPerMillion: 1, outputUsdPerMillion: 2 };
  const provider = record().providers[0]!;
  it.each<[string, Partial<UnsignedPeerMetadata>, string]>([
    ['unknown version', { version: 2 }, 'unknown_version'],
    ['33 providers', { providers: Array.from({ length: 33 }, () => provider) }, 'invalid_record'],
    [
      '257 services',
      {
        providers: [0, 1].map(() => ({
          ...provider,
          services: Array.from({ length: 129 }, (_, i) => `m${i}`),
        })),
      },
      'invalid_record',
    ],
    [
      'negative price',
      { providers: [{ ...provider, defaultPricing: { ...pricing, inputUsdPerMillion: -1 } }] },
      'invalid_record',
    ],
    [
      'price with 7 decimals',
      {
        providers: [{ ...provider, defaultPricing: { ...pricing, inputUsdPerMillion: 0.0000001 } }],
      },
      'invalid_record',
    ],
    [
      'cached above input',
      {
        providers: [{ ...provider, defaultPricing: { ...pricing, cachedInputUsdPerMillion: 1.5 } }],
      },
      'invalid_record',
    ],
    ['load above concurrency', { providers: [{ ...provider, currentLoad: 5 }] }, 'invalid_record'],
    [
      'oversize record',
      { displayName: 'x', verifications: { blob: 'y'.repeat(70_000) } },
      'too_large',
    ],
  ])('rejects %s', async (_name, overrides, reason) => {
    const metadata = await signed(overrides);
    expect(await verifyMetadata(encodeMetadata(metadata), { now: NOW })).toMatchObject({
      ok: false,
      reason,
    });
  });

  it('rejects non-finite prices and garbage bytes', async () => {
    const metadata = await signed();
    const broken = structuredClone(metadata) as unknown as {
      providers: { defaultPricing: { inputUsdPerMillion: number } }[];
    };
    broken.providers[0]!.defaultPricing.inputUsdPerMillion = Number.POSITIVE_INFINITY;
    expect(await verifyMetadata(broken, { now: NOW })).toMatchObject({ ok: false });
    expect(await verifyMetadata(new Uint8Array([0xff, 0x00, 0x7b]), { now: NOW })).toMatchObject({
      reason: 'invalid_json',
    });
    expect(await verifyMetadata('{}', { now: NOW })).toMatchObject({ reason: 'invalid_record' });
  });
});
