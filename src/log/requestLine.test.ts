import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createLogger, type Logger } from './logger.js';
import { logRequestLine, type RequestLine } from './requestLine.js';

function capture(): { destination: Writable; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { destination, lines };
}

const LINE: RequestLine = {
  requestId: 'req "1"\\\u2028\n\tü',
  route: '/v1/chat/completions?x=1',
  model: 'gpt-4o',
  peer: '16Uiu2HAm',
  status: 200,
  inputTokens: 12,
  cachedInputTokens: 0,
  outputTokens: 34,
  costUsd: '0.000123',
  ms: 5,
  errorCode: null,
};

/** The line pino writes for the same fields through its generic path. */
function pinoLine(logger: Logger, line: RequestLine): void {
  const { errorCode, ...rest } = line;
  logger.info({ ...rest, ...(errorCode ? { errorCode } : {}) }, 'request');
}

/** Both lines with their time removed (they are written a millisecond apart at most). */
function withoutTime(text: string): string {
  return text.replace(/,"time":\d+/, '');
}

describe('request lines', () => {
  const cases: Array<[string, RequestLine]> = [
    ['every field set, escapes in strings', LINE],
    [
      'nulls, an error code, a non-finite number',
      {
        ...LINE,
        requestId: null,
        model: null,
        peer: null,
        status: 502,
        ms: Number.NaN,
        errorCode: 'upstream_failed',
      },
    ],
  ];
  for (const [name, line] of cases) {
    it(`are the bytes pino writes: ${name}`, () => {
      const direct = capture();
      const generic = capture();
      const directLogger = createLogger({
        name: 'seller',
        destination: direct.destination,
        pretty: false,
      });
      const genericLogger = createLogger({
        name: 'seller',
        destination: generic.destination,
        pretty: false,
      });
      // Written without pino's generic path (its redaction pass over every value).
      const info = vi.spyOn(directLogger, 'info');
      logRequestLine(directLogger, line);
      expect(info).not.toHaveBeenCalled();
      logRequestLine(directLogger.child({ component: 'x' }), line);
      pinoLine(genericLogger, line);
      pinoLine(genericLogger.child({ component: 'x' }), line);
      expect(direct.lines.map(withoutTime)).toEqual(generic.lines.map(withoutTime));
      expect(direct.lines).toHaveLength(2);
      expect(JSON.parse(direct.lines[0]!)).toMatchObject({
        level: 30,
        name: 'seller',
        msg: 'request',
      });
      expect(JSON.parse(direct.lines[0]!).time).toBeGreaterThan(0);
    });
  }

  it("use a logger's serializers and skip a disabled level", () => {
    const out = capture();
    const logger = createLogger({ destination: out.destination, pretty: false, level: 'warn' });
    logRequestLine(logger, LINE);
    expect(out.lines).toEqual([]);
    const child = createLogger({ destination: out.destination, pretty: false }).child(
      {},
      { serializers: { route: (route: string) => route.replace(/\?.*/, '?…') } },
    );
    logRequestLine(child, LINE);
    expect(JSON.parse(out.lines[0]!).route).toBe('/v1/chat/completions?…');
  });
});
