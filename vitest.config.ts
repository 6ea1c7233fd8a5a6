import { defineConfig } from 'vitest/config';

// One runner for the whole repo: unit tests sit beside their source (`x.test.ts`),
// scenario tests that start several processes live in test/.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // `*.netns.test.ts` (hole punching across network namespaces) are included: they need root,
    // iproute2 and python3, and fail saying so without them (docs/guide/selling.md "Selling from behind NAT").
    exclude: ['**/node_modules/**'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/summaryReporter.ts'],
  },
});
