/**
 * The local facilitator over HTTP, called directly (no gateway checks in front): its own
 * verify/settle verdicts on anvil, its routes, and `svc x402 facilitator` as a process.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { PaymentRequirements } from '@x402/core/types';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUsd } from '../../money/index.js';
import { removeTempDir, tempDir } from '../../testing/index.js';
import { topupRequirements } from '../challenge.js';
import { craftedPayment, startTopupHarness, type TopupHarness } from '../testing/topupHarness.js';

let h: TopupHarness;
let requirements: PaymentRequirements;
beforeAll(async () => {
  h = await startTopupHarness();
  requirements = topupRequirements({
    asset: h.asset,
    payTo: privateKeyToAccount(generatePrivateKey()).address,
    amountMicro: parseUsd('3'),
  });
});
afterAll(async () => {
  await h?.stop();
});

async function postJson(path: string, body: unknown) {
  const response = await fetch(`${h.facilitatorServer.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('facilitator HTTP routes', () => {
  it('GET /supported lists exact on the local chain and the signer', async () => {
    const supported = await h.facilitatorClient.getSupported();
    expect(supported.kinds).toContainEqual(
      expect.objectContaining({
        x402Version: 2,
        scheme: 'exact',
        network: `eip155:${h.chain.anvil.chainId}`,
      }),
    );
    expect(Object.values(supported.signers).flat().length).toBeGreaterThan(0);
  });

  it('answers 400 to a body that is not a verify request, 404 and 405 elsewhere', async () => {
    expect((await postJson('/verify', { hello: 1 })).status).toBe(400);
    expect((await postJson('/nothing', {})).status).toBe(404);
    expect((await fetch(`${h.facilitatorServer.url}/settle`)).status).toBe(405);
  });
});

describe('facilitator verdicts (its own checks, on chain)', () => {
  it('settles a valid payment once; the same authorization again fails', async () => {
    const payer = await h.newPayer('5');
    const payload = await craftedPayment(payer, requirements);
    const verdict = await h.facilitatorClient.verify(payload, requirements);
    expect(verdict).toMatchObject({ isValid: true });
    const first = await h.facilitatorClient.settle(payload, requirements);
    expect(first.success).toBe(true);
    expect(await h.usdcBalance(requirements.payTo as `0x${string}`)).toBe(parseUsd('3'));
    const again = await h.facilitatorClient.settle(payload, requirements);
    expect(again.success).toBe(false);
    expect(await h.usdcBalance(requirements.payTo as `0x${string}`)).toBe(parseUsd('3'));
  });

  it.each([
    [
      'an expired authorization',
      { validBefore: BigInt(Math.floor(Date.now() / 1000) - 10) },
      /valid_before|expired/i,
    ],
    [
      'validAfter in the future',
      { validAfter: BigInt(Math.floor(Date.now() / 1000) + 3600) },
      /valid_after|future/i,
    ],
    ['a wrong payee', { to: privateKeyToAccount(generatePrivateKey()).address }, /recipient/i],
    ['an amount mismatch', { value: parseUsd('2') }, /value|amount/i],
  ] as const)('rejects %s', async (_name, overrides, reason) => {
    const payer = await h.newPayer('5');
    const payload = await craftedPayment(payer, requirements, overrides);
    const verdict = await h.facilitatorClient.verify(payload, requirements);
    expect(verdict.isValid).toBe(false);
    expect(verdict.invalidReason).toMatch(reason);
  });

  it('rejects a signature by someone else', async () => {
    const payer = await h.newPayer('5');
    const forged = await craftedPayment(privateKeyToAccount(generatePrivateKey()), requirements);
    (forged.payload as { authorization: { from: string } }).authorization.from = payer.address;
    const verdict = await h.facilitatorClient.verify(forged, requirements);
    expect(verdict.isValid).toBe(false);
    expect(verdict.invalidReason).toMatch(/signature/i);
  });

  it('rejects a payer without funds', async () => {
    const payer = await h.newPayer('1');
    const verdict = await h.facilitatorClient.verify(
      await craftedPayment(payer, requirements),
      requirements,
    );
    expect(verdict.isValid).toBe(false);
  });
});

describe('svc x402 facilitator', () => {
  it('serves /supported for the chain behind --rpc-url and stops on SIGTERM', async () => {
    const bin = fileURLToPath(new URL('../../../bin/svc.js', import.meta.url));
    const dataDir = tempDir('svc-x402-cli-');
    const child = spawn(
      process.execPath,
      [bin, '--json', 'x402', 'facilitator', '--port', '0', '--rpc-url', h.chain.rpcUrl],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, SVC_DATA_DIR: dataDir },
      },
    );
    try {
      let output = '';
      const started = await new Promise<{ url: string; network: string }>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const end = output.indexOf('\n}');
          if (end >= 0) resolve(JSON.parse(output.slice(0, end + 2)));
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      expect(started.network).toBe(`eip155:${h.chain.anvil.chainId}`);
      const supported = (await (await fetch(`${started.url}/supported`)).json()) as {
        kinds: unknown[];
      };
      expect(supported.kinds.length).toBeGreaterThan(0);
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      removeTempDir(dataDir);
    }
  });
});
