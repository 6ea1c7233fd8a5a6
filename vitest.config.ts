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
    // Three workers on the 2-core CI machine: most files wait on processes, sockets and chains
    // rather than compute (two workers kept the cores ~55 % busy). From a fresh clone, `.ci/run`
    // took 10 min 35 s with three (tests 588 s) where it took 17 min 52 s with two (tests 1,001 s).
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/summaryReporter.ts'],
  },
});
