import { describe, expect, it } from 'vitest';
import { buildCatalog } from './buildCatalog.js';
import { OfferIndex } from './offerIndex.js';
import { staticReputation } from './reputation.js';
import { peerIdFor, peerRecord } from './testing/peerRecord.js';

const A = peerIdFor('a');
const B = peerIdFor('b');
const C = peerIdFor('c');

describe('buildCatalog', () => {
  const peers = [
    peerRecord({
      peerId: 'a',
      services: [
        {
          id: 'claude-sonnet-4-20250514',
          pricing: {
            inputUsdPerMillion: 3,
            outputUsdPerMillion: 15,
            cachedInputUsdPerMillion: 0.3,
          },
          protocols: ['anthropic-messages'],
          capabilities: {
            contextLength: 200_000,
            maxOutputTokens: 64_000,
            toolUse: true,
            supportedParameters: ['temperature', 'tools', 'top_k'],
            inputModalities: ['text', 'image'],
          },
        },
        // A cheaper alias of the same model at the same seller: the offer keeps this one.
        {
          id: 'anthropic/claude-sonnet-4',
          pricing: {
            inputUsdPerMillion: 2,
            outputUsdPerMillion: 10,
            cachedInputUsdPerMillion: 0.2,
          },
          protocols: ['anthropic-messages'],
          capabilities: {
            contextLength: 200_000,
            maxOutputTokens: 64_000,
            toolUse: true,
            supportedParameters: ['temperature', 'tools', 'top_k'],
            inputModalities: ['text', 'image'],
          },
        },
      ],
    }),
    peerRecord({
      peerId: 'b',
      services: [
        {
          id: 'Claude-Sonnet-4',
          pricing: { inputUsdPerMillion: 2, outputUsdPerMillion: 10 },
          protocols: ['openai-chat-completions'],
          capabilities: {
            contextLength: 100_000,
            toolUse: false,
            supportedParameters: ['temperature', 'tools'],
            inputModalities: ['text'],
          },
        },
      ],
    }),
    peerRecord({
      peerId: 'c',
      services: [
        {
          id: 'gpt-image-1',
          categories: ['image'],
          protocols: ['openai-images'],
          unitBilling: { imageUsd: 0.04 },
        },
      ],
    }),
    peerRecord({ peerId: 'd', reachable: false, services: [{ id: 'ghost-model' }] }),
  ];
  const catalog = buildCatalog(OfferIndex.fromPeers(peers), {
    reputation: staticReputation({ [A]: 80, [B]: 90, [C]: 70 }),
  });

  it('merges cosmetic variants into one entry with every alias', () => {
    expect(catalog.map((entry) => entry.id)).toEqual(['claude-sonnet-4', 'gpt-image-1']);
    const sonnet = catalog[0]!;
    expect(sonnet.aliases).toEqual([
      'Claude-Sonnet-4',
      'anthropic/claude-sonnet-4',
      'claude-sonnet-4-20250514',
    ]);
    expect(sonnet.supported_protocols).toEqual(['anthropic-messages', 'openai-chat-completions']);
    expect(sonnet.type).toBe('text');
  });

  it('keeps one offer per seller: its cheapest alias', () => {
    const sonnet = catalog[0]!;
    expect(sonnet.peers.map((p) => [p.peerId, p.serviceId])).toEqual([
      [A, 'anthropic/claude-sonnet-4'],
      [B, 'Claude-Sonnet-4'],
    ]);
  });

  it('aggregates guarantees: minimum, intersection, AND; omits what one seller does not report', () => {
    const sonnet = catalog[0]!;
    expect(sonnet.context_length).toBe(100_000);
    expect(sonnet.max_output_tokens).toBeUndefined();
    expect(sonnet.supported_parameters).toEqual(['temperature', 'tools']);
    expect(sonnet.capabilities).toEqual({ tool_use: false, input_modalities: ['text'] });
    expect(sonnet.architecture).toBeUndefined();
    expect(sonnet.capability_coverage).toEqual({
      offers: 2,
      context_length: 2,
      max_output_tokens: 1,
      architecture: 0,
      capabilities: 2,
      supported_parameters: 2,
    });
  });

  it('halves the effective reputation of a seller omitting a cached price others advertise', () => {
    const b = catalog[0]!.peers.find((p) => p.peerId === B)!;
    expect(b.reputationScore).toBe(90);
    expect(b.effectiveReputationScore).toBe(45);
    const a = catalog[0]!.peers.find((p) => p.peerId === A)!;
    expect(a.effectiveReputationScore).toBe(80);
  });

  it('ranks equal prices by effective reputation', () => {
    // Same price (2+10); B scores 90 but is halved to 45, so A (80) ranks first.
    expect(catalog[0]!.peers[0]!.peerId).toBe(A);
  });

  it('types image models from their category and carries unit prices', () => {
    const image = catalog[1]!;
    expect(image.type).toBe('image');
    expect(image.peers[0]!.prices.imageUsd).toBe(0.04);
  });
});
