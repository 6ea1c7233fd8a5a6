import { describe, expect, it } from 'vitest';
import { isSvcError, SvcError } from '../errors/index.js';
import type { TokenPriceMicro } from '../money/index.js';
import { CostCap, cutAfterTokens } from './costCap.js';
import { streamErrorBytes } from './streamFailure.js';

// $1 per million input and output tokens: 1 micro-USD per token.
const PRICE: TokenPriceMicro = {
  inputMicroPerMillion: 1_000_000n,
  outputMicroPerMillion: 1_000_000n,
};

function chatStream(words: number): Uint8Array[] {
  const events = Array.from({ length: words }, () => {
    const chunk = {
      id: 'c',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: { content: ' hello' } }],
    };
    return `data: ${JSON.stringify(chunk)}\n\n`;
  });
  events.push('data: [DONE]\n\n');
  // Chunk boundaries fall mid-event, as they do on the wire.
  const bytes = Buffer.from(events.join(''));
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += 37) out.push(bytes.subarray(at, at + 37));
  return out;
}

async function collect(source: AsyncIterable<Uint8Array>) {
  const parts: Uint8Array[] = [];
  try {
    for await (const part of source) parts.push(part);
    return { text: Buffer.concat(parts).toString(), error: undefined };
  } catch (error) {
    return { text: Buffer.concat(parts).toString(), error };
  }
}

async function* from(chunks: Uint8Array[]) {
  yield* chunks;
}

describe('the cost cap', () => {
  it('passes an answer within the cap byte for byte', async () => {
    const chunks = chatStream(10);
    const cap = new CostCap({
      maxCostMicro: 1_000n,
      price: PRICE,
      inputTokens: 10,
      sellerProtocol: 'openai-chat-completions',
    });
    const { text, error } = await collect(cap.watch(from(chunks)));
    expect(error).toBeUndefined();
    expect(text).toBe(Buffer.concat(chunks).toString());
    expect(cap.reached).toBe(false);
  });

  it('cuts a seller that ignores max tokens at an event boundary, past the tolerance only', async () => {
    const cap = new CostCap({
      maxCostMicro: 30n, // 10 input + 20 output tokens
      price: PRICE,
      inputTokens: 10,
      sellerProtocol: 'openai-chat-completions',
    });
    const { text, error } = await collect(cap.watch(from(chatStream(500))));
    expect(cap.reached).toBe(true);
    expect(isSvcError(error) && error.code).toBe('max_cost_reached');
    expect(text.endsWith('\n\n')).toBe(true);
    const delivered = text.split('\n\n').filter(Boolean).length;
    expect(delivered).toBeGreaterThanOrEqual(20);
    expect(cap.outputTokens).toBeGreaterThan(cutAfterTokens(20));
    expect(delivered).toBeLessThanOrEqual(cutAfterTokens(20));
  });

  it('does not watch a free answer', () => {
    const cap = new CostCap({
      maxCostMicro: undefined,
      price: PRICE,
      inputTokens: 10,
      sellerProtocol: 'openai-chat-completions',
    });
    const source = from([]);
    expect(cap.watch(source)).toBe(source);
  });

  it('ends a same-format stream with an error event in the client format', () => {
    expect(
      streamErrorBytes('openai-chat-completions', new SvcError('max_cost_reached'), 0),
    ).toContain('"code":"max_cost_reached"');
    expect(streamErrorBytes('anthropic-messages', new SvcError('max_cost_reached'), 0)).toMatch(
      /^event: error\n/,
    );
  });
});
