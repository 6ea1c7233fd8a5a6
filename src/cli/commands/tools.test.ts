import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../devnet/index.js';
import { runCli } from '../testing/runCli.js';

let dir: string;
let server: Server;
let port: number;
const SECRET = `svc_${'k'.repeat(43)}`;

/**
 * A stand-in for the tool: records its arguments, environment and the file OPENCODE_CONFIG
 * names, then exits with $FAKE_EXIT, or waits for a signal when $FAKE_WAIT is set.
 */
function fakeTool(name: string): void {
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      `printf '%s\\n' "$@" > "${dir}/${name}.args"`,
      `env > "${dir}/${name}.env"`,
      `[ -n "$OPENCODE_CONFIG" ] && cp "$OPENCODE_CONFIG" "${dir}/${name}.config"`,
      `if [ -n "$FAKE_WAIT" ]; then trap 'exit 0' USR1; echo ready > "${dir}/${name}.ready"; while :; do sleep 0.05; done; fi`,
      'exit "$FAKE_EXIT"',
      '',
    ].join('\n'),
  );
  chmodSync(path, 0o755);
}

const catalog = {
  data: [
    { id: 'cheap-chat', type: 'text', capabilities: { tool_use: false }, peers: [] },
    {
      id: 'agent-small',
      type: 'text',
      context_length: 128000,
      capabilities: { tool_use: true },
      peers: [{ prices: { outputUsdPerMillion: 0.4 } }],
    },
    {
      id: 'agent-big',
      type: 'text',
      context_length: 128000,
      max_output_tokens: 8192,
      capabilities: { tool_use: true },
      peers: [{ prices: { outputUsdPerMillion: 15 } }],
    },
  ],
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-tools-'));
  for (const name of ['claude', 'codex', 'opencode']) fakeTool(name);
  port = await freePort();
  // Answers /v1/models like a buyer, and like a gateway that knows one key.
  server = createServer((req, res) => {
    const keyed = req.url === '/gw/v1/models';
    if (keyed && req.headers.authorization !== `Bearer ${SECRET}`) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"type":"error","error":{"message":"This API key is not known to this gateway."}}');
      return;
    }
    const ok = req.url === '/v1/models' || keyed;
    res.writeHead(ok ? 200 : 404, { 'content-type': 'application/json' });
    res.end(ok ? JSON.stringify(catalog) : '{}');
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  FAKE_EXIT: '0',
  PATH: `${dir}:${process.env.PATH}`,
  SVC_DATA_DIR: join(dir, 'data'),
  SVC_BUYER_PORT: String(port),
  ...extra,
});
const argsOf = (name: string) =>
  readFileSync(join(dir, `${name}.args`), 'utf8')
    .trim()
    .split('\n');
const envOf = (name: string) => readFileSync(join(dir, `${name}.env`), 'utf8');

describe('svc claude / codex / opencode', () => {
  it('launches claude against the buyer; every argument but --svc-* reaches it', async () => {
    const run = await runCli(
      ['claude', '--version', '--json', '--resume', 'abc', '-p', 'hello world'],
      env({ ANTHROPIC_API_KEY: 'sk-ant-mine' }),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(argsOf('claude')).toEqual([
      '--version',
      '--json',
      '--resume',
      'abc',
      '-p',
      'hello world',
    ]);
    const toolEnv = envOf('claude');
    expect(toolEnv).toContain(`ANTHROPIC_BASE_URL=http://127.0.0.1:${port}\n`);
    expect(toolEnv).toContain('ANTHROPIC_AUTH_TOKEN=svc-local\n');
    // The best text model with tool use; the cheapest one fills the small/fast slot.
    expect(toolEnv).toContain('ANTHROPIC_MODEL=agent-big\n');
    expect(toolEnv).toContain('ANTHROPIC_DEFAULT_HAIKU_MODEL=agent-small\n');
    expect(toolEnv).not.toContain('ANTHROPIC_API_KEY=');
    expect(run.stderr).toBe(
      'svc: claude uses agent-big, the best text model with tool use on the network (pass --model to choose)\n',
    );
  });

  it("keeps the user's --model, and follows the default route when one is set", async () => {
    const chosen = await runCli(['claude', '--model', 'cheap-chat'], env());
    expect(chosen.stderr).toBe('');
    expect(envOf('claude')).not.toContain('ANTHROPIC_MODEL=');
    expect(argsOf('claude')).toEqual(['--model', 'cheap-chat']);
    expect((await runCli(['buyer', 'route', 'set', 'agent-small'], env())).code).toBe(0);
    const routed = await runCli(['codex', 'exec', 'hi'], env());
    expect(routed.stderr).toBe('');
    expect(argsOf('codex')).toContain('model="agent-small"');
    expect((await runCli(['buyer', 'route', 'clear'], env())).code).toBe(0);
  });

  it('gives codex a responses provider with /v1, no WebSockets, and the key variable', async () => {
    const run = await runCli(['codex', 'exec', 'fix it'], env());
    expect(run.code, run.stderr).toBe(0);
    const args = argsOf('codex');
    expect(args.slice(-2)).toEqual(['exec', 'fix it']);
    const provider = args[1]!;
    expect(provider).toContain(`base_url="http://127.0.0.1:${port}/v1"`);
    expect(provider).toContain('wire_api="responses"');
    expect(provider).toContain('supports_websockets=false');
    expect(provider).toContain('stream_max_retries=1');
    expect(provider).toContain('env_key="SVC_LOCAL_KEY"');
    expect(args).toContain('model_provider="svc"');
    expect(envOf('codex')).toContain('SVC_LOCAL_KEY=svc-local\n');
  });

  it('gives opencode a generated svc provider listing the network models, removed after', async () => {
    const run = await runCli(['opencode', 'run', 'hi'], env());
    expect(run.code, run.stderr).toBe(0);
    const config = JSON.parse(readFileSync(join(dir, 'opencode.config'), 'utf8'));
    expect(config.model).toBe('svc/agent-big');
    expect(config.provider.svc.options).toEqual({
      baseURL: `http://127.0.0.1:${port}/v1`,
      apiKey: '{env:SVC_LOCAL_KEY}',
    });
    expect(Object.keys(config.provider.svc.models)).toEqual([
      'cheap-chat',
      'agent-small',
      'agent-big',
    ]);
    expect(config.provider.svc.models['agent-big']).toMatchObject({
      tool_call: true,
      limit: { context: 128000, output: 8192 },
    });
    const path = /OPENCODE_CONFIG=(.*)\n/.exec(envOf('opencode'))![1]!;
    expect(existsSync(path)).toBe(false);
  });

  it('goes through a gateway with the key from the named variable, or says why not', async () => {
    const gateway = `http://127.0.0.1:${port}/gw`;
    const run = await runCli(
      ['claude', '--svc-gateway', gateway, '--svc-key-env', 'MY_KEY', '-p', 'hi'],
      env({ MY_KEY: SECRET }),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(argsOf('claude')).toEqual(['-p', 'hi']);
    expect(envOf('claude')).toContain(`ANTHROPIC_BASE_URL=${gateway}\n`);
    expect(envOf('claude')).toContain(`ANTHROPIC_AUTH_TOKEN=${SECRET}\n`);
    const codex = await runCli(
      ['codex', `--svc-gateway=${gateway}/v1`, 'exec', 'x'],
      env({ SVC_API_KEY: SECRET }),
    );
    expect(codex.code, codex.stderr).toBe(0);
    expect(argsOf('codex')[1]).toContain(`base_url="${gateway}/v1"`);
    expect(argsOf('codex')[1]).toContain('env_key="SVC_API_KEY"');
    const noKey = await runCli(['claude', '--svc-gateway', gateway], env());
    expect(noKey.stderr).toMatch(/set SVC_API_KEY to your gateway key/);
    const refused = await runCli(
      ['claude', '--svc-gateway', gateway],
      env({ SVC_API_KEY: 'svc_x' }),
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused the key in SVC_API_KEY: This API key is not known/);
  });

  it("exits with the tool's own exit code, and shows svc's help only for --svc-help", async () => {
    const run = await runCli(['claude'], env({ FAKE_EXIT: '3' }));
    expect(run.code).toBe(3);
    const help = await runCli(['opencode', '--svc-help'], env());
    expect(help.stdout).toMatch(/^Usage: svc opencode/);
  });

  it('forwards a SIGTERM to the tool and returns its status', async () => {
    rmSync(join(dir, 'codex.ready'), { force: true });
    const child = spawn(
      process.execPath,
      [join(import.meta.dirname, '../../../bin/svc.js'), 'codex'],
      {
        env: { ...process.env, ...env({ FAKE_WAIT: '1' }) },
        stdio: 'ignore',
      },
    );
    // svc and the fake tool start under tsx: ~1 s alone, over 10 s on a loaded 2-core machine.
    const until = Date.now() + 60_000;
    while (Date.now() < until && !existsSync(join(dir, 'codex.ready'))) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(existsSync(join(dir, 'codex.ready'))).toBe(true);
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    // The fake tool has no SIGTERM trap: it dies of it, and svc reports 128 + 15.
    expect(code).toBe(143);
  }, 90_000);

  it('says how to start a buyer when none answers, and how to install a missing tool', async () => {
    const noBuyer = await runCli(['claude'], env({ SVC_BUYER_PORT: String(await freePort()) }));
    expect(noBuyer.code).toBe(1);
    expect(noBuyer.stderr).toMatch(/no buyer answers at .*svc buyer start/);
    const missing = await runCli(['codex'], { ...env(), PATH: '/nonexistent' });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/codex is not installed.*npm install -g @openai\/codex/);
  });
});
