import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { batchedWriter } from './batchedWriter.js';

const LOGGER = fileURLToPath(new URL('./logger.ts', import.meta.url));

describe('log lines batched for a few milliseconds', () => {
  it('writes the lines of a few milliseconds in one write, in order', async () => {
    const writes: string[] = [];
    const writer = batchedWriter({ write: (text: string) => writes.push(text) } as never, 20);
    writer.write('a\n');
    writer.write('b\n');
    await new Promise((resolve) => setImmediate(resolve));
    writer.write('c\n');
    expect(writes).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(writes).toEqual(['a\nb\nc\n']);
    writer.write('d\n');
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(writes).toEqual(['a\nb\nc\n', 'd\n']);
  });

  it('writes what is pending when the process exits, also from process.exit in the same turn', () => {
    const script = `
      import { createLogger } from ${JSON.stringify(LOGGER)};
      const logger = createLogger({ pretty: false });
      logger.info({ n: 1 }, 'first');
      logger.warn({ n: 2 }, 'second');
      process.exit(3);
    `;
    let stderr = '';
    try {
      execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      const failed = error as { status: number; stderr: string };
      expect(failed.status).toBe(3);
      stderr = failed.stderr;
    }
    const lines = stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; n: number });
    expect(lines.map((line) => [line.msg, line.n])).toEqual([
      ['first', 1],
      ['second', 2],
    ]);
  });
});
