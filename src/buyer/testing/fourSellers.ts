/**
 * A buyer on an in-memory network of four sellers, for the buyer server's tests
 * (src/buyer/server.test.ts, server.badInput.test.ts): "cheap" and "dear" sell the same gpt-4o
 * (cheap streams), "claude" a messages model, "images" an image model that fails.
 */
import { peerIdFor } from '../../catalog/testing/peerRecord.js';
import { MemoryNetwork } from './memoryNetwork.js';
import { anthropicMessage, chatCompletion, chatStream } from './sellerReplies.js';
import { startTestBuyer, type TestBuyer } from './testBuyer.js';

export const CHEAP = peerIdFor('cheap');
export const DEAR = peerIdFor('dear');
export const CLAUDE = peerIdFor('claude');
export const IMAGES = peerIdFor('images');

/** The unpaid buyer over the four sellers. */
export async function startFourSellerBuyer(): Promise<TestBuyer> {
  const network = new MemoryNetwork();
  network.addSeller(
    {
      peerId: 'cheap',
      services: [
        {
          id: 'gpt-4o-2024-08-06',
          pricing: {
            inputUsdPerMillion: 2.5,
            outputUsdPerMillion: 10,
            cachedInputUsdPerMillion: 1.25,
          },
          capabilities: { contextLength: 128_000, toolUse: true },
        },
      ],
    },
    (call) =>
      call.json.stream ? chatStream(call, ['Hel', 'lo']) : chatCompletion(call, 'hi from cheap'),
  );
  network.addSeller(
    {
      peerId: 'dear',
      services: [
        {
          id: 'openai/gpt-4o',
          pricing: { inputUsdPerMillion: 5, outputUsdPerMillion: 15, cachedInputUsdPerMillion: 2 },
          capabilities: { contextLength: 64_000 },
        },
      ],
    },
    (call) => chatCompletion(call, 'hi from dear'),
  );
  network.addSeller(
    {
      peerId: 'claude',
      provider: 'anthropic',
      services: [
        {
          id: 'claude-sonnet-4-20250514',
          pricing: { inputUsdPerMillion: 3, outputUsdPerMillion: 15 },
          protocols: ['anthropic-messages'],
        },
      ],
    },
    (call) => anthropicMessage(call, 'hello from claude'),
  );
  network.addSeller(
    {
      peerId: 'images',
      services: [
        {
          id: 'gpt-image-1',
          categories: ['image'],
          protocols: ['openai-images'],
          unitBilling: { imageUsd: 0.04 },
        },
      ],
    },
    () => ({ status: 500 }),
  );
  return startTestBuyer({ network, payments: 'unpaid-dev' });
}
