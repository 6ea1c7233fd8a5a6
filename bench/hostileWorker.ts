/**
 * The worker-thread alternative to sliced counting that bench/hostile.bench.ts measures
 * (decision 100): counts the texts it is sent with the same tokenizer.
 */
import { parentPort } from 'node:worker_threads';
import { countTextTokens } from '../src/formats/tokens.js';
import { tablesComplete } from '../src/formats/tokensTables.js';

parentPort?.on('message', async (message: { id: number; text: string }) => {
  await tablesComplete();
  parentPort?.postMessage({ id: message.id, tokens: countTextTokens(message.text) });
});
