import { defineConfig } from 'vitest/config';

// Only the network-namespace tests (root, iproute2 and iptables required): `npm run test:netns`.
export default defineConfig({
  test: {
    include: ['src/**/*.netns.test.ts'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
