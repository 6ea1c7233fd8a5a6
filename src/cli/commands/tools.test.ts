import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../devnet/index.js';
import { runCli } from '../testing/runCli.js';

let dir: string;
let buyer: Server;
let port: number;

/** A stand-in for the tool: records its arguments and environment, exits with $FAKE_EXIT. */
function fakeTool(name: string): void {
  const path = join(dir, name);
  writeFileSync(
    path,
    `#!/bin/sh\nprintf '%s\\n' "$@" > "${dir}/${name}.args"\nenv > "${dir}/${name}.env"\nexit \${FAKE_EXIT:-0}\n`,
  );
  chmodSync(path, 0o755);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-tools-'));
  for (const name of ['claude', 'codex', 'opencode']) fakeTool(name);
  port = await freePort();
  buyer = createServer((req, res) => {
    res
      .writeHead(req.url === '/_svc/status' ? 200 : 404, { 'content-type': 'application/json' })
      .end('{}');
  });
  await new Promise<void>((resolve) => buyer.listen(port, '127.0.0.1', resolve));
});
afterAll(() => {
  buyer.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  PATH: `${dir}:${process.env.PATH}`,
  SVC_DATA_DIR: join(dir, 'data'),
  SVC_BUYER_PORT: String(port),
  ...extra,
});

describe('svc claude / codex / opencode', () => {
  it('launches claude against the buyer with a placeholder key, passing arguments through', async () => {
    const run = await runCli(['claude', '--resume', 'abc', '-p', 'hello world'], env());
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(dir, 'claude.args'), 'utf8').trim().split('\n')).toEqual([
      '--resume',
      'abc',
      '-p',
      'hello world',
    ]);
    const toolEnv = readFileSync(join(dir, 'claude.env'), 'utf8');
    expect(toolEnv).toContain(`ANTHROPIC_BASE_URL=http://127.0.0.1:${port}\n`);
    expect(toolEnv).toContain('ANTHROPIC_AUTH_TOKEN=svc-local');
  });

  it('points codex and opencode at the OpenAI base URL with /v1', async () => {
    expect((await runCli(['codex', 'exec', 'fix it'], env())).code).toBe(0);
    expect(readFileSync(join(dir, 'codex.env'), 'utf8')).toContain(
      `OPENAI_BASE_URL=http://127.0.0.1:${port}/v1\n`,
    );
    expect((await runCli(['opencode'], env())).code).toBe(0);
    const opencodeEnv = readFileSync(join(dir, 'opencode.env'), 'utf8');
    expect(opencodeEnv).toContain(`OPENAI_BASE_URL=http://127.0.0.1:${port}/v1\n`);
    expect(opencodeEnv).toContain(`ANTHROPIC_BASE_URL=http://127.0.0.1:${port}\n`);
  });

  it("exits with the tool's own exit code", async () => {
    const run = await runCli(['claude'], env({ FAKE_EXIT: '3' }));
    expect(run.code).toBe(3);
    expect(run.stderr).toBe('');
  });

  it('says how to start a buyer when none answers, and how to install a missing tool', async () => {
    const noBuyer = await runCli(['claude'], env({ SVC_BUYER_PORT: String(await freePort()) }));
    expect(noBuyer.code).toBe(1);
    expect(noBuyer.stderr).toMatch(/no buyer answers at .*svc buyer start/);
    const missing = await runCli(['codex'], { ...env(), PATH: '/nonexistent' });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/codex is not installed.*npm install -g @openai\/codex/);
  });
});
