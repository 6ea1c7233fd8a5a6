/**
 * The real coding tools (pinned in test/agents/package.json: Claude Code, Codex, opencode) run
 * headless through `svc claude|codex|opencode` on a local network started like `svc up`, through
 * the buyer and through the gateway with a key. Each is asked to read a file in a temporary
 * project and report it: the demo model (docs/guide/selling.md "Demo model") calls the tool's own read or
 * shell tool, the tool runs it, and the answer quotes the file. Through the gateway, Claude Code
 * uses a seller that speaks only chat-completions and Codex one that speaks only messages, so
 * tool calls cross translation in both directions. The tools are installed by
 * `npm run agents:install`, or by this file when they are missing (required under CI=true).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devLayout, freePort, type RunningDevnet, startDevnet } from '../src/devnet/index.js';
import { type DemoVendor, startDemoVendor } from './support/demoVendor.js';
import { ensurePinnedPackages } from './support/pinnedPackages.js';

const ROOT = new URL('..', import.meta.url).pathname;
const BIN = join(ROOT, 'bin/svc.js');
const TOOLS_BIN = join(ROOT, 'test/agents/node_modules/.bin');
const SECRET_WORD = 'pelican-7f3a';

function toolsInstalled(): boolean {
  return ['claude', 'codex', 'opencode'].every((bin) => existsSync(join(TOOLS_BIN, bin)));
}

// Installed when missing (a fresh clone); in CI (CI=true) or when asked, a failed install fails
// the run instead of skipping it.
const available = ensurePinnedPackages('test/agents', toolsInstalled, 'SVC_AGENT_TOOLS');

let devnet: RunningDevnet;
let dataDir: string;
let project: string;
let home: string;
let chatOnly: DemoVendor;
let messagesOnly: DemoVendor;

beforeAll(async () => {
  if (!available) return;
  dataDir = mkdtempSync(join(tmpdir(), 'svc-agents-'));
  project = join(dataDir, 'project');
  home = join(dataDir, 'home');
  mkdirSync(project);
  mkdirSync(home);
  writeFileSync(join(project, 'notes.txt'), `The secret word is ${SECRET_WORD}.\n`);
  chatOnly = await startDemoVendor('openai-chat-completions');
  messagesOnly = await startDemoVendor('anthropic-messages');
  const pricing = { inputUsdPerMillion: 1, outputUsdPerMillion: 5 };
  const capabilities = { contextLength: 128_000, maxOutputTokens: 8192, toolUse: true };
  devnet = await startDevnet({
    dataDir,
    sellers: 1,
    fresh: true,
    detach: false,
    ports: {
      buyer: await freePort(),
      gateway: await freePort(),
      chain: await freePort(),
      bootstrap: await freePort(),
      facilitator: await freePort(),
      indexer: await freePort(),
    },
    env: { ...process.env, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' },
    print: () => {},
    extraSellers: [
      {
        displayName: 'Chat only',
        summary: 'chat-completions only',
        providers: [
          {
            type: 'openai-chat',
            baseUrl: chatOnly.baseUrl,
            services: { 'svc-chat-only': { categories: ['text'], pricing, capabilities } },
            defaultPricing: pricing,
            maxConcurrency: 8,
          },
        ],
      },
      {
        displayName: 'Messages only',
        summary: 'messages only',
        providers: [
          {
            type: 'anthropic-messages',
            baseUrl: messagesOnly.baseUrl,
            services: { 'svc-messages-only': { categories: ['text'], pricing, capabilities } },
            defaultPricing: pricing,
            maxConcurrency: 8,
          },
        ],
      },
    ],
  });
}, 240_000);

afterAll(async () => {
  await devnet?.stop();
  await chatOnly?.close();
  await messagesOnly?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `svc <args>` in the project with the pinned tools first on PATH and a private HOME. */
async function svc(args: string[], extraEnv: Record<string, string> = {}): Promise<ToolRun> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${TOOLS_BIN}:${process.env.PATH}`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local/state'),
    // The tools must not update themselves or fetch catalogs from the vendors.
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    DISABLE_AUTOUPDATER: '1',
    ...extraEnv,
  };
  // No npm run here: the tool's working directory is the test's project.
  delete env.npm_lifecycle_event;
  // stdin closed: headless Codex and opencode read a prompt from stdin while it is open.
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: project,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 150_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

interface LogRow {
  route: string;
  requestedModel: string | null;
  serviceId: string | null;
  status: number;
  keyId: string | null;
  costUsd: string;
}

async function gatewayLog(): Promise<LogRow[]> {
  const run = await svc(['--data-dir', devLayout(dataDir).buyer, '--json', 'gateway', 'logs']);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as LogRow[];
}

const PROMPT = 'Read notes.txt and tell me what it says';

const HEADLESS: Record<'claude' | 'codex' | 'opencode', string[]> = {
  claude: ['claude', '-p', PROMPT],
  codex: ['codex', 'exec', '--skip-git-repo-check', PROMPT],
  opencode: ['opencode', 'run', PROMPT],
};

describe.skipIf(!available)('coding tools end to end', () => {
  const buyerArgs = () => ['--data-dir', devLayout(dataDir).buyer];

  it.each(Object.keys(HEADLESS) as Array<keyof typeof HEADLESS>)(
    '%s reads a file through the buyer',
    async (tool) => {
      const run = await svc([...buyerArgs(), ...HEADLESS[tool]]);
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout).toContain(SECRET_WORD);
      expect(run.stderr).toContain(`svc: ${tool} uses`);
    },
    180_000,
  );

  const viaGateway: Array<[keyof typeof HEADLESS, string[], string]> = [
    // Messages from Claude Code to a chat-completions seller, tool_use <-> tool_calls.
    ['claude', ['--model', 'svc-chat-only'], 'svc-chat-only'],
    // Responses from Codex to a messages seller, function_call <-> tool_use.
    ['codex', ['-m', 'svc-messages-only'], 'svc-messages-only'],
    ['opencode', [], 'svc-demo-smart'],
  ];

  it.each(viaGateway)(
    '%s reads a file through the gateway with a key (%s)',
    async (tool, modelArgs, served) => {
      const before = (await gatewayLog()).length;
      const [bin, ...rest] = HEADLESS[tool];
      const run = await svc(
        [bin!, '--svc-gateway', devnet.state.gatewayUrl, ...modelArgs, ...rest],
        {
          SVC_API_KEY: devnet.devKey.secret,
        },
      );
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout).toContain(SECRET_WORD);
      const after = await gatewayLog();
      const rows = after.slice(0, after.length - before);
      const calls = rows.filter((row) => row.serviceId === served && row.status === 200);
      // The tool call and the answer quoting its result: at least two paid calls of the key.
      expect(calls.length, JSON.stringify(rows, null, 1)).toBeGreaterThanOrEqual(2);
      for (const call of calls) {
        expect(call.keyId).toBe(devnet.devKey.id);
        expect(Number(call.costUsd)).toBeGreaterThan(0);
      }
    },
    180_000,
  );

  it('translated the tool loops: both single-format sellers were used', () => {
    expect(chatOnly.requests).toBeGreaterThanOrEqual(2);
    expect(messagesOnly.requests).toBeGreaterThanOrEqual(2);
  });
});
