import { describe, expect, it } from 'vitest';
import {
  decodeRequestRecord,
  encodeRequestRecord,
  journalSinceOf,
  type RequestRecord,
  requestRecordPath,
} from './requestRecord.js';

const RECORD: RequestRecord = {
  requestId: 'req_1/x',
  status: 200,
  completed: true,
  streamed: true,
  peerId: 'ab'.repeat(20),
  provider: 'openai',
  serviceId: 'gpt-x',
  model: 'gpt-x',
  usage: { inputTokens: 12, cachedInputTokens: 2, outputTokens: 30 },
  costUsd: '0.000042',
  latencyMs: 7,
  attempts: ['abab: ok'],
  at: 1_700_000_000_000,
};

describe('request record contract', () => {
  it('round-trips a record', () => {
    expect(decodeRequestRecord(encodeRequestRecord(RECORD))).toEqual(RECORD);
    expect(requestRecordPath(RECORD.requestId)).toBe('/_svc/requests/req_1%2Fx');
  });

  it.each([
    ['a float cost', { costUsd: '0.1' }],
    ['negative tokens', { usage: { inputTokens: -1, cachedInputTokens: 0, outputTokens: 0 } }],
    ['a missing completed flag', { completed: undefined }],
  ])('refuses %s', (_name, change) => {
    expect(() => decodeRequestRecord(JSON.stringify({ ...RECORD, ...change }))).toThrow();
  });

  it('reads the journal start of a 404', () => {
    expect(journalSinceOf('1700000000000')).toBe(1_700_000_000_000);
    expect(journalSinceOf(['12'])).toBe(12);
    expect(journalSinceOf('soon')).toBeNull();
    expect(journalSinceOf(undefined)).toBeNull();
  });
});
