/** `svc seller setup`: a valid provider config written, invalid input refused without writing. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from '../../testing/index.js';
import { runCli } from '../testing/runCli.js';

describe('svc seller setup', () => {
  it('writes a valid provider config and refuses invalid input without writing', async () => {
    const dataDir = tempDir('svc-seller-setup-');
    const svc = (...args: string[]) => runCli(['--data-dir', dataDir, ...args], {});
    try {
      const demo = await svc(
        'seller',
        'setup',
        '--provider',
        'demo',
        '--replace',
        '--display-name',
        'my demo',
      );
      expect(demo.code, demo.stderr).toBe(0);
      const openai = await svc(
        'seller',
        'setup',
        '--provider',
        'openai-chat',
        '--api-key-env',
        'OPENAI_API_KEY',
        '--service',
        'gpt-4o-mini=gpt-4o-mini-2024-07-18',
        '--input-price',
        '0.15',
        '--output-price',
        '0.6',
        '--cached-price',
        '0.075',
      );
      expect(openai.code, openai.stderr).toBe(0);
      expect(openai.stdout).toContain('OPENAI_API_KEY is not set here');
      const file = JSON.parse(readFileSync(join(dataDir, 'config.json'), 'utf8'));
      expect(file.seller.displayName).toBe('my demo');
      expect(file.seller.providers).toHaveLength(2);
      expect(file.seller.providers[1]).toMatchObject({
        type: 'openai-chat',
        apiKeyEnv: 'OPENAI_API_KEY',
        services: { 'gpt-4o-mini': { upstreamModel: 'gpt-4o-mini-2024-07-18' } },
        defaultPricing: {
          inputUsdPerMillion: 0.15,
          outputUsdPerMillion: 0.6,
          cachedInputUsdPerMillion: 0.075,
        },
      });
      const before = readFileSync(join(dataDir, 'config.json'), 'utf8');
      const negative = await svc(
        'seller',
        'setup',
        '--provider',
        'openai-chat',
        '--service',
        'x',
        '--input-price',
        '-1',
        '--output-price',
        '1',
      );
      expect(negative.code).toBe(1);
      expect(negative.stderr).toMatch(/inputUsdPerMillion/);
      const badType = await svc('seller', 'setup', '--provider', 'mystery');
      expect(badType.code).toBe(2);
      expect(readFileSync(join(dataDir, 'config.json'), 'utf8')).toBe(before);
    } finally {
      removeTempDir(dataDir);
    }
  });
});
