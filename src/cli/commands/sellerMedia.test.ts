/** `svc seller setup` for media providers: per-image and per-video prices. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from '../../testing/index.js';
import { runCli } from '../testing/runCli.js';

describe('svc seller setup for media providers', () => {
  it('writes imageUsd / videoUsd per service with token prices defaulting to 0', async () => {
    const dataDir = tempDir('svc-seller-media-');
    const svc = (...args: string[]) => runCli(['--data-dir', dataDir, ...args], {});
    try {
      const images = await svc(
        'seller',
        'setup',
        '--provider',
        'openai-images',
        '--service',
        'gpt-image-1',
        '--image-price',
        '0.04',
        '--replace',
      );
      expect(images.code, images.stderr).toBe(0);
      const video = await svc(
        'seller',
        'setup',
        '--provider',
        'video',
        '--base-url',
        'https://video.example.com',
        '--service',
        'kling-2',
        '--video-price',
        '0.5',
      );
      expect(video.code, video.stderr).toBe(0);
      const file = JSON.parse(readFileSync(join(dataDir, 'config.json'), 'utf8'));
      expect(file.seller.providers).toMatchObject([
        {
          type: 'openai-images',
          services: { 'gpt-image-1': { imageUsd: 0.04 } },
          defaultPricing: { inputUsdPerMillion: 0, outputUsdPerMillion: 0 },
        },
        { type: 'video', services: { 'kling-2': { videoUsd: 0.5 } } },
      ]);
      const noBase = await svc(
        'seller',
        'setup',
        '--provider',
        'video',
        '--service',
        'v',
        '--video-price',
        '1',
      );
      expect(noBase.code).not.toBe(0);
      expect(noBase.stderr).toContain('baseUrl');
    } finally {
      removeTempDir(dataDir);
    }
  });
});
