import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../payments/testing.js';
import { anvilBinaryPath, readDeployment, startLocalChain } from './index.js';

describe('local chain', () => {
  it('restarts from its state file with the same contracts and balances', async () => {
    expect(anvilBinaryPath()).toMatch(/anvil/);
    const data = tempDataDir('chain');
    const stateFile = `${data.dir}/anvil-state.json`;
    const address = privateKeyToAccount(generatePrivateKey()).address;
    try {
      const first = await startLocalChain({ dataDir: data.dir, stateFile });
      await first.faucet(address, { usdcMicro: 42n, ethWei: 7n });
      const deployment = readDeployment(data.dir)!;
      expect(deployment.paymentsAddress).toBe(first.deployment.paymentsAddress);
      await first.stop();
      const second = await startLocalChain({ dataDir: data.dir, stateFile });
      try {
        expect(second.deployment.paymentsAddress).toBe(deployment.paymentsAddress);
        expect(await second.contract.usdcBalanceOf(address)).toBe(42n);
        expect(await second.clients.publicClient.getBalance({ address })).toBe(7n);
      } finally {
        await second.stop();
      }
    } finally {
      data.remove();
    }
  });
});
