/**
 * `svc up` end to end: the real CLI as a subprocess starts anvil, a bootstrap node, demo
 * sellers, the buyer and the gateway; official SDK clients use it in all three formats; Ctrl-C
 * stops every process and frees every port.
 */

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, isPortFree } from '../src/devnet/index.js';

const BIN = new URL('../bin/svc.js', import.meta.url).pathname;
const HEX_PEER = /^[0-9a-f]{40}$/;
const USD = /^\d+\.\d{6}$/;

let dataDir: string;
let child: ChildProcess;
let output = '';
let ports: {
  buyer: number;
  gateway: number;
  chain: number;
  bootstrap: number;
  facilitator: number;
  indexer: number;
};
let key: string;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-up-'));
  ports = {
    buyer: await freePort(),
    gateway: await freePort(),
    facilitator: await freePort(),
    chain: await freePort(),
    bootstrap: await freePort(),
    indexer: await freePort(),
  };
  child = spawn(
    process.execPath,
    [
      BIN,
      '--data-dir',
      dataDir,
      'up',
      '--sellers',
      '2',
      '--buyer-port',
      String(ports.buyer),
      '--gateway-port',
      String(ports.gateway),
      '--chain-port',
      String(ports.chain),
      '--bootstrap-port',
      String(ports.bootstrap),
      '--facilitator-port',
      String(ports.facilitator),
      '--indexer-port',
      String(ports.indexer),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' },
    },
  );
  child.stdout!.on('data', (chunk) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`svc up not ready in 120 s:\n${output}`)),
      120_000,
    );
    const check = setInterval(() => {
      if (/ready in [\d.]+ s/.test(output) && /Try it:[\s\S]*Press Ctrl-C/.test(output)) {
        clearInterval(check);
        clearTimeout(timer);
        resolve();
      }
    }, 100);
    child.once('exit', (code) => {
      clearInterval(check);
      clearTimeout(timer);
      reject(new Error(`svc up exited (${code}):\n${output}`));
    });
  });
  key = /key\s+(svc_[A-Za-z0-9_-]+)/.exec(output)![1]!;
}, 150_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

describe('svc up', () => {
  it('prints the URLs, a gateway key and how it handled the trust gate', () => {
    expect(output).toContain(`http://127.0.0.1:${ports.buyer}`);
    expect(output).toContain(`http://127.0.0.1:${ports.gateway}`);
    expect(output).toContain(`http://127.0.0.1:${ports.indexer}/stats`);
    expect(key).toMatch(/^svc_/);
    expect(output).toMatch(/minTrustScore is 0 .*no on-chain history/);
    expect(output).toMatch(
      /check\s+a request through the gateway was served by [0-9a-f]{40} for \d+\.\d{6} USD/,
    );
  });

  it('serves chat-completions through the gateway with headers naming the seller and the cost', async () => {
    const openai = new OpenAI({ baseURL: `http://127.0.0.1:${ports.gateway}/v1`, apiKey: key });
    const { data, response } = await openai.chat.completions
      .create({ model: 'svc-demo-fast', messages: [{ role: 'user', content: 'hello' }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toContain('hello');
    expect(response.headers.get('x-svc-peer-id')).toMatch(HEX_PEER);
    expect(response.headers.get('x-svc-estimated-cost-usd')).toMatch(USD);
    expect(Number(response.headers.get('x-svc-estimated-cost-usd'))).toBeGreaterThan(0);
  });

  it('serves messages through the gateway and responses through the buyer', async () => {
    const anthropic = new Anthropic({ baseURL: `http://127.0.0.1:${ports.gateway}`, apiKey: key });
    const message = await anthropic.messages.create({
      model: 'svc-demo-smart',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi from anthropic' }],
    });
    expect(message.content[0]!.type).toBe('text');

    const openai = new OpenAI({
      baseURL: `http://127.0.0.1:${ports.buyer}/v1`,
      apiKey: 'placeholder',
    });
    const response = await openai.responses.create({
      model: 'svc-demo-fast',
      input: 'hi from responses',
    });
    expect(response.output_text).toContain('hi from responses');

    const stream = await openai.chat.completions.create({
      model: 'svc-demo-fast',
      stream: true,
      messages: [{ role: 'user', content: 'stream please' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toContain('stream please');
  });

  it('shows the spend on GET /v1/key', async () => {
    const response = await fetch(`http://127.0.0.1:${ports.gateway}/v1/key`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const { data } = (await response.json()) as {
      data: { usage: { requests: number; spent_usd: string } };
    };
    expect(data.usage.requests).toBeGreaterThanOrEqual(3);
    expect(Number(data.usage.spent_usd)).toBeGreaterThan(0);
  });

  it('pays the demo sellers what they claim: honest usage is never refused', async () => {
    const { channels } = (await (
      await fetch(`http://127.0.0.1:${ports.buyer}/_svc/channels`)
    ).json()) as { channels: { requests: number; refusedClaims: number }[] };
    expect(channels.reduce((sum, channel) => sum + channel.requests, 0)).toBeGreaterThanOrEqual(4);
    expect(channels.map((channel) => channel.refusedClaims)).toEqual(channels.map(() => 0));
  });

  it('tops up a key of its own with x402, and the key then spends it', async () => {
    const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      promisify(execFile)(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
    const buyerDir = join(dataDir, 'dev', 'buyer');
    const created = JSON.parse(
      (
        await run([
          '--data-dir',
          buyerDir,
          '--json',
          'gateway',
          'key',
          'create',
          '--label',
          'mine',
          '--new-identity',
          '--allow-topup',
        ])
      ).stdout,
    ) as { id: string; secret: string };

    // `svc up` funded a payer wallet with test USDC only (no gas: x402 payments are signatures);
    // the summary prints this very command.
    const payerDir = join(dataDir, 'dev', 'payer');
    expect(output).toContain(`--data-dir ${payerDir} x402 pay-topup 5 --key`);
    const paid = JSON.parse(
      (
        await run([
          '--data-dir',
          payerDir,
          '--json',
          'x402',
          'pay-topup',
          '3',
          '--key',
          created.secret,
          '--gateway-url',
          `http://127.0.0.1:${ports.gateway}`,
        ])
      ).stdout,
    ) as { status: number };
    expect(paid.status).toBe(200);

    const keyView = async () =>
      (
        (await (
          await fetch(`http://127.0.0.1:${ports.gateway}/v1/key`, {
            headers: { authorization: `Bearer ${created.secret}` },
          })
        ).json()) as {
          data: { usage: { requests: number; spent_usd: string; topped_up_usd: string } };
        }
      ).data;
    expect((await keyView()).usage.topped_up_usd).toBe('3.000000');

    // The running buyer sweeps the key wallet's USDC into its credits; then the key can pay sellers.
    const openai = new OpenAI({
      baseURL: `http://127.0.0.1:${ports.gateway}/v1`,
      apiKey: created.secret,
      maxRetries: 0,
    });
    const deadline = Date.now() + 60_000;
    let served: string | null = null;
    while (!served && Date.now() < deadline) {
      try {
        const { response } = await openai.chat.completions
          .create({
            model: 'svc-demo-fast',
            messages: [{ role: 'user', content: 'paid by my own top-up' }],
          })
          .withResponse();
        served = response.headers.get('x-svc-estimated-cost-usd');
      } catch (error) {
        // 402 insufficient_deposits until the sweep has deposited the top-up.
        expect((error as { status?: number }).status).toBe(402);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    expect(served).toMatch(USD);
    const view = await keyView();
    expect(view.usage.requests).toBeGreaterThanOrEqual(1);
    expect(Number(view.usage.spent_usd)).toBeGreaterThan(0);
  }, 120_000);

  it('serves a public snapshot of the dev sellers at the indexer', async () => {
    const deadline = Date.now() + 60_000;
    let peers: Array<{ peerId: string; onChainStats: { settledVolumeUsd: string } }> = [];
    while (Date.now() < deadline) {
      const reply = await fetch(`http://127.0.0.1:${ports.indexer}/stats`);
      if (reply.status === 200) {
        peers = ((await reply.json()) as { peers: typeof peers }).peers;
        if (peers.length === 2) break;
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(peers).toHaveLength(2);
    for (const peer of peers) {
      expect(peer.peerId).toMatch(HEX_PEER);
      expect(peer.onChainStats.settledVolumeUsd).toMatch(USD);
    }
  }, 90_000);

  it('svc status lists every component as running', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      BIN,
      '--data-dir',
      dataDir,
      '--json',
      'status',
    ]);
    const status = JSON.parse(stdout) as {
      components: Array<{ name: string; alive: boolean }>;
      buyerHealthy: boolean;
    };
    expect(status.components.map((c) => c.name)).toEqual([
      'chain',
      'bootstrap',
      'seller-1',
      'seller-2',
      'facilitator',
      'indexer',
      'gateway',
    ]);
    expect(status.components.every((c) => c.alive)).toBe(true);
    // The buyer runs in the gateway's process (docs/decisions/180-gateway-runs-its-buyer.md).
    expect(status.buyerHealthy).toBe(true);
  });

  it('svc down stops the attached svc up, every process, and frees every port', async () => {
    const state = JSON.parse(readFileSync(join(dataDir, 'dev', 'state.json'), 'utf8')) as {
      components: Array<{ pid: number; name: string }>;
    };
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const { stdout } = await promisify(execFile)(process.execPath, [
      BIN,
      '--data-dir',
      dataDir,
      '--json',
      'down',
    ]);
    // Reverse start order, each named once.
    expect((JSON.parse(stdout) as { stopped: string[] }).stopped).toEqual(
      state.components.map((c) => c.name).reverse(),
    );
    expect(await exited).toBe(0);
    expect(output).toContain('every component has exited');
    for (const { pid } of state.components) expect(isAlive(pid)).toBe(false);
    for (const port of Object.values(ports)) expect(await isPortFree(port)).toBe(true);
  }, 90_000);
});
