import { describe, expect, it } from 'vitest';
import type { AnswerEvidence, Receipt } from '../network/index.js';
import { EvidenceStore } from './evidence.js';

function evidence(bytes: number): AnswerEvidence {
  return {
    receipt: {} as Receipt,
    request: { method: 'POST', path: '/v1/chat/completions', body: new Uint8Array(bytes) },
    response: { status: 200, body: new Uint8Array(0) },
    sellerProtocol: 'openai-chat-completions',
    peerId: 'a'.repeat(40),
    serviceId: 'gpt-paid',
  };
}

describe('audit evidence is bounded in count, bytes and age', () => {
  it('is taken once, by request id', () => {
    const store = new EvidenceStore(() => 0);
    const kept = evidence(10);
    store.keep('req_1', kept);
    expect(store.take('req_2')).toBeUndefined();
    expect(store.take('req_1')).toBe(kept);
    expect(store.take('req_1')).toBeUndefined();
  });

  it('drops the oldest past the count and past the bytes, and refuses one larger than all', () => {
    const store = new EvidenceStore(() => 0, { maxEntries: 2, maxBytes: 100 });
    store.keep('a', evidence(10));
    store.keep('b', evidence(10));
    store.keep('c', evidence(10));
    expect(store.take('a')).toBeUndefined();
    expect(store.size()).toBe(2);
    store.keep('d', evidence(85));
    // b, c and d are 105 bytes: b goes, and c and d fit both limits.
    expect(store.take('b')).toBeUndefined();
    expect(store.size()).toBe(2);
    store.keep('huge', evidence(101));
    expect(store.take('huge')).toBeUndefined();
    expect(store.take('c')).toBeDefined();
    expect(store.take('d')).toBeDefined();
  });

  it('drops evidence older than its age limit', () => {
    let now = 0;
    const store = new EvidenceStore(() => now, { maxAgeMs: 1000 });
    store.keep('old', evidence(1));
    now = 600;
    store.keep('young', evidence(1));
    now = 1001;
    expect(store.take('old')).toBeUndefined();
    expect(store.take('young')).toBeDefined();
  });

  it('keeps one copy per request id (a failover attempt replaces the earlier one)', () => {
    const store = new EvidenceStore(() => 0, { maxBytes: 15 });
    store.keep('a', evidence(10));
    const latest = evidence(10);
    store.keep('a', latest);
    expect(store.size()).toBe(1);
    expect(store.take('a')).toBe(latest);
  });
});
