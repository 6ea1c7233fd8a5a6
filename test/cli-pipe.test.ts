/** The binary under a pipe whose reader goes away early (`svc ... | head -1`). */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/svc.js', import.meta.url));

describe('svc under a closed pipe', () => {
  it('exits quietly when the reader stops reading (no EPIPE stack trace)', async () => {
    const child = spawn(process.execPath, [BIN, 'gateway', 'key', 'create', '--help'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // Close our end before it writes anything (it is still starting), like a `head` that is done.
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  });
});
