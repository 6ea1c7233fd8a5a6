import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { redact } from '../errors/index.js';
import { createLogger } from './logger.js';
import { redactHeaders } from './redact.js';

describe('redact', () => {
  it.each([
    'sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    'sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA',
    'svc_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318',
  ])('hides %s', (secret) => {
    expect(redact(`before ${secret} after`)).toBe('before [redacted] after');
  });

  it('keeps the scheme of a bearer token and hides the token', () => {
    expect(redact('Authorization: Bearer abcdefghijklmnop')).toBe(
      'Authorization: Bearer [redacted]',
    );
  });

  it('hides URL credentials', () => {
    expect(redact('postgres://admin:hunter2@127.0.0.1:5432/db')).toBe(
      'postgres://[redacted]@127.0.0.1:5432/db',
    );
  });

  it('leaves addresses and ordinary text alone', () => {
    const text = 'peer 0x1234567890abcdef1234567890abcdef12345678 served gpt-4o in 12 ms';
    expect(redact(text)).toBe(text);
  });

  it('replaces secret headers wholesale', () => {
    expect(
      redactHeaders({ authorization: 'x', 'content-type': 'application/json', cookie: 'a=b' }),
    ).toEqual({
      authorization: '[redacted]',
      'content-type': 'application/json',
      cookie: '[redacted]',
    });
  });

  it('the logger never writes a secret, in the message or in an error', () => {
    let written = '';
    const destination = new Writable({
      write(chunk, _enc, done) {
        written += chunk.toString();
        done();
      },
    });
    const logger = createLogger({ destination, pretty: false });
    logger.info('calling upstream with key sk-AAAAAAAAAAAAAAAAAAAAAAAA');
    logger.error(
      { err: new Error('401 for Bearer abcdefghijklmnopqrstuvwxyz') },
      'upstream failed',
    );
    expect(written).not.toContain('AAAAAAAAAAAAAAAA');
    expect(written).not.toContain('abcdefghijklmnop');
    expect(written).toContain('[redacted]');
  });
});
