import { defineConfig } from 'vitest/config';

// Only the network-namespace tests (root, iproute2 and python3 required; `npm test` runs them
// too): `npm run test:netns`.
export default defineConfig({
  test: {
    include: ['src/**/*.netns.test.ts'],
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
