import { defineConfig } from 'vitest/config';

/**
 * The vitest configuration of mutation runs: only the test files scripts/mutation.ts names for
 * the module under test (CADRE_MUTATION_TESTS, comma-separated), in Stryker's worker threads.
 */
export default defineConfig({
  test: {
    include: (process.env.CADRE_MUTATION_TESTS ?? '').split(',').filter((path) => path !== ''),
    testTimeout: 10_000,
  },
});
