/**
 * `svc chain deploy` and `svc chain verify` against anvil started as Base Sepolia (chain id
 * 84532) with a USDC-like token at Circle's Base Sepolia USDC address: the path a real deployment
 * takes. Buyers and sellers configured with a contract that is not ours refuse to start.
 */
import { readFileSync } from 'node:fs';
import { type Address, getContractAddress, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_DEPLOYER_KEY, deploymentPath, NETWORKS } from '../../chain/index.js';
import { type AnvilBaseSepolia, startAnvilBaseSepolia } from '../../chain/testing.js';
import { SvcPaymentsAbi, SvcPaymentsBytecode } from '../../contracts/index.js';
import { IdentityStore } from '../../identity/index.js';
import { tempDataDir } from '../../payments/testing.js';
import { runCli } from '../testing/runCli.js';

let chain: AnvilBaseSepolia;
let data: { dir: string; remove: () => void };
let deployer: Address;
let deployed: Address;

const CIRCLE_BASE_SEPOLIA_USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';

function svc(...args: string[]) {
  return runCli(['--data-dir', data.dir, ...args]);
}

/** Deploys SvcPayments with other constructor arguments, from anvil's funded account. */
async function deployVariant(usdc: Address, graceSeconds: bigint): Promise<Address> {
  const sender = chain.clients.senderFor(privateKeyToAccount(ANVIL_DEPLOYER_KEY));
  return sender.deploy(SvcPaymentsAbi, SvcPaymentsBytecode, [usdc, graceSeconds]);
}

beforeAll(async () => {
  // Blocks every second, as on a real chain: the deployment waits for real confirmations.
  chain = await startAnvilBaseSepolia({ blockTimeSeconds: 1 });
  data = tempDataDir('chain-deploy');
  const identities = new IdentityStore(data.dir, {});
  deployer = identities.create('deployer').address as Address;
  identities.create('broke');
  await chain.setBalance(deployer, parseEther('1'));
});

afterAll(async () => {
  await chain?.stop();
  data?.remove();
});

describe('svc chain deploy', () => {
  it('documents its options', async () => {
    const help = await svc('chain', 'deploy', '--help');
    expect(help.code).toBe(0);
    for (const option of ['--network', '--identity', '--usdc', '--dry-run', '--confirmations']) {
      expect(help.stdout).toContain(option);
    }
  });

  it('prints the transaction and its cost on --dry-run, and sends nothing', async () => {
    const run = await svc(
      'chain',
      'deploy',
      '--network',
      chain.rpcUrl,
      '--identity',
      'deployer',
      '--dry-run',
      '--eth-usd',
      '2000',
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('deploy SvcPayments to base-sepolia (chain 84532)');
    expect(run.stdout).toContain(`from          ${deployer} (nonce 0)`);
    expect(run.stdout).toContain(`usdc ${CIRCLE_BASE_SEPOLIA_USDC}, grace 86400 s`);
    expect(run.stdout).toMatch(/cost {10}\d+\.\d+ ETH \(\d+\.\d{6} USD at 2000 USD\/ETH\)/);
    expect(run.stdout).toContain('dry run: nothing was sent');
    const json = JSON.parse(
      (
        await svc(
          '--json',
          'chain',
          'deploy',
          '--network',
          chain.rpcUrl,
          '--identity',
          'deployer',
          '--dry-run',
        )
      ).stdout,
    ) as { gasEstimate: string; costWei: string; requiredWei: string };
    expect(BigInt(json.gasEstimate)).toBeGreaterThan(1_000_000n);
    expect(BigInt(json.requiredWei)).toBeGreaterThanOrEqual(BigInt(json.costWei));
    expect(await chain.clients.publicClient.getTransactionCount({ address: deployer })).toBe(0);
    const wouldBe = getContractAddress({ from: deployer, nonce: 0n });
    expect(await chain.clients.publicClient.getCode({ address: wouldBe })).toBeUndefined();
  });

  it('refuses a deployer without gas, naming the amount needed and the address to fund', async () => {
    const broke = new IdentityStore(data.dir, {}).load('broke').account.address;
    const run = await svc('chain', 'deploy', '--network', chain.rpcUrl, '--identity', 'broke');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`The deployer ${broke} holds 0 ETH on base-sepolia`);
    expect(run.stderr).toMatch(/needs \d+\.\d+ ETH \(\d+\.\d{6} USD at 3000 USD\/ETH\)/);
    expect(run.stderr).toMatch(new RegExp(`Send at least \\d+\\.\\d+ ETH to ${broke}`));
    expect(await chain.clients.publicClient.getTransactionCount({ address: broke })).toBe(0);
  });

  it('refuses a chain that is neither Base nor Base Sepolia, and a network it does not know', async () => {
    const unknown = await svc(
      'chain',
      'deploy',
      '--network',
      'base-goerli',
      '--identity',
      'deployer',
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      '--network "base-goerli" is not base-sepolia, base or an http(s) RPC URL',
    );
  });

  it('deploys, waits for confirmations, verifies the code and prints the config lines', async () => {
    const run = await svc('chain', 'deploy', '--network', chain.rpcUrl, '--identity', 'deployer');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const match = /deployed SvcPayments at (0x[0-9a-fA-F]{40})/.exec(run.stdout);
    deployed = match![1] as Address;
    expect(deployed).toBe(getContractAddress({ from: deployer, nonce: 0n }));
    expect(run.stdout).toContain('2 confirmation(s)');
    expect(run.stdout).toContain('svc config set chain.network base-sepolia');
    expect(run.stdout).toContain(`svc config set chain.paymentsAddress ${deployed}`);
    expect(run.stdout).not.toContain('chain.usdcAddress');
    const receipt = await chain.clients.publicClient.getBlockNumber();
    expect(receipt).toBeGreaterThan(0n);
    const file = JSON.parse(readFileSync(deploymentPath(data.dir, 'base-sepolia'), 'utf8'));
    expect(file).toMatchObject({
      network: 'base-sepolia',
      chainId: 84532,
      usdcAddress: CIRCLE_BASE_SEPOLIA_USDC,
      paymentsAddress: deployed,
      gracePeriodSeconds: 86_400,
      deployer,
    });
    // Only SvcPayments was deployed: one transaction from the deployer.
    expect(await chain.clients.publicClient.getTransactionCount({ address: deployer })).toBe(1);
  });
});

describe('svc chain verify', () => {
  it('documents its options', async () => {
    const help = await svc('chain', 'verify', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('<address>');
    expect(help.stdout).toContain('--network');
  });

  it("accepts this version's contract, field by field", async () => {
    const run = await svc('chain', 'verify', deployed, '--network', chain.rpcUrl);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    for (const field of ['chain id', 'code', 'usdc', 'grace period', 'EIP-712 domain']) {
      expect(run.stdout).toMatch(new RegExp(`${field} +ok `));
    }
    expect(run.stdout).toContain("verified: this version's SvcPayments");
  });

  it('names what differs: no contract, other code, another USDC, another grace period', async () => {
    const eoa = privateKeyToAccount(ANVIL_DEPLOYER_KEY).address;
    const none = await svc('chain', 'verify', eoa, '--network', chain.rpcUrl);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('the address holds no contract');

    const token = await svc('chain', 'verify', chain.usdcAddress, '--network', chain.rpcUrl);
    expect(token.code).toBe(1);
    expect(token.stderr).toMatch(/its code is \d+ bytes, this version's SvcPayments is \d+/);

    const otherUsdc = await deployVariant(eoa, 86_400n);
    const usdc = await svc('chain', 'verify', otherUsdc, '--network', chain.rpcUrl);
    expect(usdc.code).toBe(1);
    expect(usdc.stdout).toMatch(/usdc +DIFFERS/);
    expect(usdc.stderr).toContain(`its USDC is ${eoa}, not ${CIRCLE_BASE_SEPOLIA_USDC}`);
    expect(usdc.stderr).not.toContain('its code');

    const shortGrace = await deployVariant(chain.usdcAddress, 60n);
    const grace = await svc('--json', 'chain', 'verify', shortGrace, '--network', chain.rpcUrl);
    expect(grace.code).toBe(1);
    expect(grace.stderr).toContain('its grace period is 60 s, not 86400 s');
    expect(JSON.parse(grace.stdout)).toMatchObject({
      matches: false,
      code: { matches: true },
      gracePeriodSeconds: { expected: 86_400, actual: 60 },
    });
  });
});

describe('buyers and sellers against the configured contract', () => {
  /** A data dir configured with the lines `svc chain deploy` printed, on `network`. */
  async function configured(network: string, paymentsAddress: Address) {
    const dir = tempDataDir('chain-node');
    const set = (...args: string[]) => runCli(['--data-dir', dir.dir, 'config', 'set', ...args]);
    expect((await set('chain.network', network)).code).toBe(0);
    expect((await set('chain.rpcUrl', chain.rpcUrl)).code).toBe(0);
    expect((await set('chain.paymentsAddress', paymentsAddress)).code).toBe(0);
    return dir;
  }

  it('a buyer configured with the wrong contract refuses to start, saying what differs', async () => {
    const wrong = await deployVariant(chain.usdcAddress, 60n);
    const dir = await configured('base-sepolia', wrong);
    try {
      const run = await runCli(['--data-dir', dir.dir, 'buyer', 'start', '--port', '0']);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(
        `The payments contract at ${wrong} (chain 84532) is not this version's SvcPayments`,
      );
      expect(run.stderr).toContain('its grace period is 60 s, not 86400 s');
    } finally {
      dir.remove();
    }
  });

  it('a buyer configured for Base mainnet on a Base Sepolia RPC refuses to start', async () => {
    const dir = await configured('base', deployed);
    try {
      const run = await runCli(['--data-dir', dir.dir, 'buyer', 'start', '--port', '0']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('the RPC is on chain 84532, not 8453');
      expect(run.stderr).toContain(
        `its USDC is ${CIRCLE_BASE_SEPOLIA_USDC}, not ${NETWORKS.base.usdcAddress}`,
      );
    } finally {
      dir.remove();
    }
  });

  it('a seller with priced offers and a contract that is not ours refuses to start', async () => {
    const dir = await configured('base-sepolia', chain.usdcAddress);
    try {
      const setup = await runCli([
        '--data-dir',
        dir.dir,
        'seller',
        'setup',
        '--provider',
        'demo',
        '--input-price',
        '1.5',
        '--output-price',
        '6',
        '--replace',
      ]);
      expect(setup.code).toBe(0);
      const run = await runCli(['--data-dir', dir.dir, 'seller', 'start', '--port', '0']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `The payments contract at ${chain.usdcAddress} (chain 84532) is not this version's SvcPayments`,
      );
      expect(run.stderr).toContain('its code is');
    } finally {
      dir.remove();
    }
  });

  it('a buyer configured with the deployed contract starts and pays on chain 84532', async () => {
    const dir = await configured('base-sepolia', deployed);
    try {
      // Without --network, verify checks against the configured chain (docs/guide/production.md).
      const verified = await runCli(['--data-dir', dir.dir, 'chain', 'verify', deployed]);
      expect(verified.stderr).toBe('');
      expect(verified.code).toBe(0);
      expect(verified.stdout).toContain("verified: this version's SvcPayments");
      const running = runCli(['--data-dir', dir.dir, '--json', 'buyer', 'start', '--port', '0']);
      const deadline = Date.now() + 30_000;
      while (process.listenerCount('SIGINT') === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      process.emit('SIGINT');
      const run = await running;
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ payments: { enabled: true, chainId: 84532 } });
    } finally {
      dir.remove();
    }
  });
});
