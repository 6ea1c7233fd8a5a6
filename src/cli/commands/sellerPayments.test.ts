import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../payments/testing.js';
import { runCli } from '../testing/runCli.js';

describe('svc seller start with priced offers', () => {
  it('refuses to start without a payment chain, naming the ways out', async () => {
    const data = tempDataDir('seller-paid-cli');
    try {
      const setup = await runCli([
        '--data-dir',
        data.dir,
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
      const run = await runCli(['--data-dir', data.dir, 'seller', 'start', '--port', '0']);
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('priced offers but no payment chain is configured');
      expect(run.stderr).toContain('svc chain start');
      expect(run.stderr).toContain('--free');
    } finally {
      data.remove();
    }
  });
});
