/**
 * One audit request: a chat completion pinned to one seller, sent through the buyer's own proxy
 * so it takes the same send path, payment and format translation as any request. The marker
 * header tells the buyer the request is an audit (its cost goes to the audit budget and it is
 * never audited itself); the buyer drops every `x-svc-*` header before the seller, so sellers
 * cannot tell audits from other traffic.
 */

import type { MicroUsd } from '../money/index.js';
import { parseUsd } from '../money/index.js';

export const AUDIT_HEADER = 'x-svc-audit';

/** Output tokens an audit answer may use (canary answers are short). */
export const AUDIT_MAX_TOKENS = 96;
/** Largest audit answer read. */
const MAX_ANSWER_BYTES = 256 * 1024;

export interface AuditQuestion {
  peerId: string;
  serviceId: string;
  prompt: string;
  temperature: number;
  seed?: number;
}

export interface AuditAnswer {
  text: string;
  costMicro: MicroUsd;
}

export type AskSeller = (question: AuditQuestion, signal: AbortSignal) => Promise<AuditAnswer>;

async function boundedText(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      throw new Error('audit answer too large');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function contentOf(json: unknown): string {
  const choices = (json as { choices?: { message?: { content?: unknown } }[] }).choices;
  const content = choices?.[0]?.message?.content;
  return typeof content === 'string' ? content : '';
}

/** Asks through the buyer at `baseUrl()`; `marker` is the buyer's audit marker. */
export function askThroughProxy(baseUrl: () => string, marker: string): AskSeller {
  return async (question, signal) => {
    const response = await fetch(`${baseUrl()}/v1/chat/completions`, {
      method: 'POST',
      signal,
      headers: {
        'content-type': 'application/json',
        'x-svc-pin-peer': `${question.peerId}@${question.serviceId}`,
        [AUDIT_HEADER]: marker,
      },
      body: JSON.stringify({
        model: question.serviceId,
        messages: [{ role: 'user', content: question.prompt }],
        temperature: question.temperature,
        max_tokens: AUDIT_MAX_TOKENS,
        ...(question.seed === undefined ? {} : { seed: question.seed }),
      }),
    });
    const body = await boundedText(response);
    if (response.status !== 200) {
      throw new Error(`audit request to ${question.peerId} answered ${response.status}`);
    }
    const cost = response.headers.get('x-svc-estimated-cost-usd');
    return {
      text: contentOf(JSON.parse(body)),
      costMicro: cost ? parseUsd(cost) : 0n,
    };
  };
}
