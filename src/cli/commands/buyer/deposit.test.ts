/** `svc buyer deposit` for a wallet holding USDC but no ETH: who pays the gas, and `--now`. */
import { parseEther } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ethBalanceOf, type LocalChain, startLocalChain } from '../../../chain/index.js';
import { IdentityStore } from '../../../identity/index.js';
import { tempDataDir } from '../../../payments/testing.js';
import { runCli } from '../../testing/runCli.js';

let chain: LocalChain;
const data = tempDataDir('cli-deposit');
const svc = (...args: string[]) => runCli(['--data-dir', data.dir, ...args]);

beforeAll(async () => {
  chain = await startLocalChain({ dataDir: data.dir });
});

afterAll(async () => {
  await chain?.stop();
  data.remove();
});

describe('svc buyer deposit with a USDC-only wallet', () => {
  it('names the relayer address to fund, refuses --now clearly, then deposits once it has gas', async () => {
    const identities = new IdentityStore(data.dir, {});
    const relayer = identities.loadDefault().account.address;
    identities.create('topup');
    const wallet = identities.load('topup').account.address;
    await chain.faucet(wallet, { usdcMicro: 3_000_000n });

    const waiting = JSON.parse(
      (await svc('buyer', 'deposit', '--identity', 'topup', '--json')).stdout,
    );
    expect(waiting).toMatchObject({
      address: wallet,
      walletUsdc: '3.000000',
      creditsUsdc: '0.000000',
      depositGas: { payer: 'none', relayerIdentity: 'default', fundAddress: relayer },
    });
    expect(waiting.depositGas.message).toContain(`send about`);
    const text = await svc('buyer', 'deposit', '--identity', 'topup');
    expect(text.stdout).toContain('gas       WAITING:');
    expect(text.stdout).toContain(`svc chain faucet ${relayer} --eth 1`);

    const refused = await svc('buyer', 'deposit', '--identity', 'topup', '--now');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`relayer identity "default" (${relayer}) has too little ETH`);
    expect(await chain.contract.usdcBalanceOf(wallet)).toBe(3_000_000n);
    expect(await chain.contract.creditsOf(wallet)).toBe(0n);

    await chain.faucet(relayer, { ethWei: parseEther('1') });
    const ready = JSON.parse(
      (await svc('buyer', 'deposit', '--identity', 'topup', '--json')).stdout,
    );
    expect(ready.depositGas).toEqual({
      payer: 'relayer',
      relayerIdentity: 'default',
      relayerAddress: relayer,
    });
    expect((await svc('buyer', 'deposit', '--identity', 'topup')).stdout).toContain(
      `gas       paid by relayer identity "default" (${relayer}); this wallet needs no ETH`,
    );

    const now = JSON.parse(
      (await svc('buyer', 'deposit', '--identity', 'topup', '--now', '--json')).stdout,
    );
    expect(now).toMatchObject({
      depositedUsdc: '3.000000',
      walletUsdc: '0.000000',
      creditsUsdc: '3.000000',
    });
    expect(now.depositGas).toBeUndefined();
    expect(await ethBalanceOf(chain.contract, wallet)).toBe(0n);
    expect(await chain.contract.creditsOf(relayer)).toBe(0n);
  });

  it('uses chain.payments.relayerIdentity from the config', async () => {
    const identities = new IdentityStore(data.dir, {});
    identities.create('payer');
    const payer = identities.load('payer').account.address;
    identities.create('topup2');
    const wallet = identities.load('topup2').account.address;
    await chain.faucet(wallet, { usdcMicro: 1_000_000n });
    expect((await svc('config', 'set', 'chain.payments.relayerIdentity', 'payer')).code).toBe(0);
    const waiting = JSON.parse(
      (await svc('buyer', 'deposit', '--identity', 'topup2', '--json')).stdout,
    );
    expect(waiting.depositGas).toMatchObject({
      payer: 'none',
      relayerIdentity: 'payer',
      fundAddress: payer,
    });
    await chain.faucet(payer, { ethWei: parseEther('1') });
    const now = JSON.parse(
      (await svc('buyer', 'deposit', '--identity', 'topup2', '--now', '--json')).stdout,
    );
    expect(now).toMatchObject({ depositedUsdc: '1.000000', creditsUsdc: '1.000000' });
  });
});
