/** The deposit sweeper on anvil: gasless deposits for USDC-only wallets, relayer gas, lost answers. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { type Address, type Hex, parseEther, parseTransaction } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createChainClients,
  ethBalanceOf,
  type LocalChain,
  PaymentsContract,
  startLocalChain,
} from '../../chain/index.js';
import { IdentityStore } from '../../identity/index.js';
import { createLogger, silentLogger } from '../../log/index.js';
import { tempDataDir } from '../testing.js';
import { DepositSweeper } from './DepositSweeper.js';

let chain: LocalChain;
const dirs: { remove: () => void }[] = [];

beforeAll(async () => {
  chain = await startLocalChain();
});
afterAll(async () => {
  await chain?.stop();
  for (const dir of dirs) dir.remove();
});

/** A data dir with the default identity (the relayer) and one more identity `key`. */
function wallets(): { store: IdentityStore; relayer: Address; key: Address } {
  const data = tempDataDir('sweep');
  dirs.push(data);
  const store = new IdentityStore(data.dir, {});
  const relayer = store.loadDefault().account.address;
  store.create('key');
  return { store, relayer, key: store.load('key').account.address };
}

/** A logger whose JSON lines are kept in `lines`. */
function capturingLogger() {
  const lines: { level: number; msg: string; [field: string]: unknown }[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger({ destination, pretty: false }), lines };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('DepositSweeper', () => {
  it('sweeps a wallet holding only USDC into its credits within one cycle; the relayer pays the gas', async () => {
    const { store, relayer, key } = wallets();
    await chain.faucet(relayer, { ethWei: parseEther('1') });
    await chain.faucet(key, { usdcMicro: 6_500_000n });
    const relayerEth = await ethBalanceOf(chain.contract, relayer);
    // One cycle: the pass `start()` runs at once; the next would be a minute later.
    const sweeper = new DepositSweeper({
      identities: store,
      contract: chain.contract,
      logger: silentLogger(),
      intervalMs: 60_000,
    });
    sweeper.start();
    try {
      await waitFor(async () => (await chain.contract.creditsOf(key)) > 0n);
    } finally {
      await sweeper.stop();
    }
    expect(await chain.contract.creditsOf(key)).toBe(6_500_000n);
    expect(await chain.contract.usdcBalanceOf(key)).toBe(0n);
    expect(await ethBalanceOf(chain.contract, key)).toBe(0n);
    // The relayer paid gas and nothing else: no USDC moved to or from it, no credits for it.
    expect(await ethBalanceOf(chain.contract, relayer)).toBeLessThan(relayerEth);
    expect(await chain.contract.usdcBalanceOf(relayer)).toBe(0n);
    expect(await chain.contract.creditsOf(relayer)).toBe(0n);
  });

  it('a wallet with its own ETH pays its own gas; the relayer is not used', async () => {
    const { store, relayer, key } = wallets();
    await chain.faucet(relayer, { ethWei: parseEther('1') });
    await chain.faucet(key, { usdcMicro: 2_000_000n, ethWei: parseEther('0.1') });
    const relayerEth = await ethBalanceOf(chain.contract, relayer);
    const sweeper = new DepositSweeper({
      identities: store,
      contract: chain.contract,
      logger: silentLogger(),
      intervalMs: 0,
    });
    const results = await sweeper.sweepOnce();
    expect(results).toEqual([{ identity: 'key', depositedMicro: 2_000_000n, gasPaidBy: 'self' }]);
    expect(await chain.contract.creditsOf(key)).toBe(2_000_000n);
    expect(await ethBalanceOf(chain.contract, relayer)).toBe(relayerEth);
    expect(await ethBalanceOf(chain.contract, key)).toBeLessThan(parseEther('0.1'));
  });

  it('relayer without gas: one line per cycle naming the address to fund, nothing lost, then succeeds once funded', async () => {
    const { store, relayer, key } = wallets();
    await chain.faucet(key, { usdcMicro: 4_000_000n });
    const { logger, lines } = capturingLogger();
    const sweeper = new DepositSweeper({
      identities: store,
      contract: chain.contract,
      logger,
      intervalMs: 0,
    });

    const first = await sweeper.sweepOnce();
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ identity: 'key', depositedMicro: 0n, fundAddress: relayer });
    expect(first[0]?.error).toContain(`relayer identity "default" (${relayer}) has too little ETH`);
    const warnings = () => lines.filter((line) => line.level === 40);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]?.msg).toContain(`send about`);
    expect(warnings()[0]?.msg).toContain(relayer);
    expect(warnings()[0]).toMatchObject({ fundAddresses: [relayer], waiting: ['key'] });

    await sweeper.sweepOnce();
    expect(warnings()).toHaveLength(2);
    expect(await chain.contract.usdcBalanceOf(key)).toBe(4_000_000n);
    expect(await chain.contract.creditsOf(key)).toBe(0n);

    await chain.faucet(relayer, { ethWei: parseEther('1') });
    const funded = await sweeper.sweepOnce();
    expect(funded).toEqual([{ identity: 'key', depositedMicro: 4_000_000n, gasPaidBy: 'relayer' }]);
    expect(await chain.contract.creditsOf(key)).toBe(4_000_000n);
    expect(await chain.contract.usdcBalanceOf(key)).toBe(0n);
    expect(await chain.contract.creditsOf(relayer)).toBe(0n);
    expect(warnings()).toHaveLength(2);
  });

  it('a relayer identity that cannot be loaded is named, and the wallet itself is the address to fund', async () => {
    const { store, key } = wallets();
    await chain.faucet(key, { usdcMicro: 1_000_000n });
    const { logger, lines } = capturingLogger();
    const sweeper = new DepositSweeper({
      identities: store,
      contract: chain.contract,
      logger,
      intervalMs: 0,
      relayerIdentity: 'payer',
    });
    const [result] = await sweeper.sweepOnce();
    expect(result).toMatchObject({ identity: 'key', depositedMicro: 0n, fundAddress: key });
    expect(result?.error).toContain('relayer identity "payer" cannot be used');
    expect(lines.filter((line) => line.level === 40)).toHaveLength(1);
    expect(await chain.contract.usdcBalanceOf(key)).toBe(1_000_000n);
  });

  it('a lost transaction answer deposits once: the authorization nonce tells the sweeper it landed', async () => {
    const { store, relayer, key } = wallets();
    await chain.faucet(relayer, { ethWei: parseEther('1') });
    await chain.faucet(key, { usdcMicro: 3_000_000n });
    const proxy = await lossyRpc(chain.rpcUrl);
    try {
      const clients = createChainClients({
        network: 'local',
        rpcUrls: [proxy.url],
        chainId: chain.deployment.chainId,
      });
      const contract = new PaymentsContract(
        clients,
        chain.deployment.paymentsAddress,
        chain.deployment.usdcAddress,
      );
      const sweeper = new DepositSweeper({
        identities: store,
        contract,
        logger: silentLogger(),
        intervalMs: 0,
      });

      // Every answer to the deposit transaction is lost, though anvil received and mined it.
      proxy.mode = 'forward-then-drop';
      const results = await sweeper.sweepOnce();
      expect(proxy.dropped).toBeGreaterThan(0);
      expect(results).toEqual([
        { identity: 'key', depositedMicro: 3_000_000n, gasPaidBy: 'relayer' },
      ]);
      expect(await chain.contract.creditsOf(key)).toBe(3_000_000n);

      // The transaction never reaches the chain: nothing is deposited, and the next pass submits
      // the same authorization (same nonce), so at most one of the two could ever land.
      await chain.faucet(key, { usdcMicro: 500_000n });
      proxy.mode = 'swallow';
      const lost = await sweeper.sweepOnce();
      expect(lost[0]).toMatchObject({ identity: 'key', depositedMicro: 0n });
      expect(lost[0]?.error).toBeTruthy();
      expect(await chain.contract.creditsOf(key)).toBe(3_000_000n);
      const swallowedNonce = proxy.sentNonces.at(-1);
      expect(swallowedNonce).toBeDefined();
      proxy.mode = 'pass';
      const retried = await sweeper.sweepOnce();
      expect(retried).toEqual([
        { identity: 'key', depositedMicro: 500_000n, gasPaidBy: 'relayer' },
      ]);
      expect(proxy.sentNonces.at(-1)).toBe(swallowedNonce);
      expect(new Set(proxy.sentNonces).size).toBe(2);
      expect(await sweeper.sweepOnce()).toEqual([]);
      expect(await chain.contract.creditsOf(key)).toBe(3_500_000n);
      expect(await chain.contract.usdcBalanceOf(key)).toBe(0n);
    } finally {
      await proxy.close();
    }
  });
});

type LossMode = 'pass' | 'forward-then-drop' | 'swallow';

/** The EIP-3009 nonce inside a signed depositWithAuthorization transaction (its fifth argument). */
function authorizationNonceOf(rawTransaction: Hex): string | undefined {
  const data = parseTransaction(rawTransaction).data;
  return data && data.length >= 10 + 64 * 5 ? data.slice(10 + 64 * 4, 10 + 64 * 5) : undefined;
}

/**
 * A JSON-RPC proxy in front of anvil that can lose the answers to `eth_sendRawTransaction`
 * (after forwarding it, or instead of forwarding it). Records the authorization nonce of every
 * transaction sent through it, in order.
 */
async function lossyRpc(target: string): Promise<{
  url: string;
  mode: LossMode;
  dropped: number;
  sentNonces: string[];
  close: () => Promise<void>;
}> {
  const state = {
    url: '',
    mode: 'pass' as LossMode,
    dropped: 0,
    sentNonces: [] as string[],
    close: (): Promise<void> => Promise.resolve(),
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString();
      const parsed = JSON.parse(body) as { method?: string; params?: unknown[] };
      const isSend = parsed.method === 'eth_sendRawTransaction';
      if (isSend) {
        const nonce = authorizationNonceOf(parsed.params?.[0] as Hex);
        if (nonce) state.sentNonces.push(nonce);
      }
      if (isSend && state.mode === 'swallow') {
        state.dropped++;
        response.destroy();
        return;
      }
      const answer = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const text = await answer.text();
      if (isSend && state.mode === 'forward-then-drop') {
        state.dropped++;
        response.destroy();
        return;
      }
      response.writeHead(answer.status, { 'content-type': 'application/json' });
      response.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
