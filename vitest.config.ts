import { defineConfig } from 'vitest/config';

// One runner for the whole repo: unit tests sit beside their source (`x.test.ts`),
// scenario tests that start several processes live in test/.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Hole punching across real network namespaces needs root, iproute2 and iptables, which a
    // fresh machine lacks: `npm run test:netns` runs it (README "Selling from behind NAT").
    exclude: ['**/node_modules/**', '**/*.netns.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/summaryReporter.ts'],
  },
});
