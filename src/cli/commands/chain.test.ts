import { describe, expect, it } from 'vitest';
import { readDeployment } from '../../chain/index.js';
import { tempDataDir } from '../../payments/testing.js';
import { runCli } from '../testing/runCli.js';

describe('svc chain start', () => {
  it('starts anvil, deploys, writes the deployment and stops on Ctrl-C', async () => {
    const data = tempDataDir('chain-cli');
    try {
      const running = runCli(['--data-dir', data.dir, 'chain', 'start', '--port', '0', '--json']);
      const deadline = Date.now() + 30_000;
      while (!readDeployment(data.dir) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const deployment = readDeployment(data.dir)!;
      expect(deployment.network).toBe('local');
      const health = await fetch(deployment.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'eth_getCode',
          params: [deployment.paymentsAddress, 'latest'],
        }),
      });
      expect(((await health.json()) as { result: string }).result.length).toBeGreaterThan(100);
      // Wait until the command is waiting for the signal, then "press Ctrl-C".
      while (process.listenerCount('SIGINT') === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      process.emit('SIGINT');
      const run = await running;
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ paymentsAddress: deployment.paymentsAddress });
      await expect(fetch(deployment.rpcUrl, { method: 'POST' })).rejects.toThrow();
    } finally {
      data.remove();
    }
  });
});
