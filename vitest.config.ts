import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Two files at once even on a 2-core machine (vitest's default there is one): the end-to-end
    // files spend most of their time waiting on the processes and servers they start.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      { test: { name: 'unit', include: ['src/**/*.test.ts', 'scripts/**/*.test.ts'], testTimeout: 10_000 } },
      { test: { name: 'e2e', include: ['test/**/*.test.ts'], exclude: ['test/services/**'], testTimeout: 60_000, hookTimeout: 60_000 } },
      // Postgres and Redis (CADRE_TEST_POSTGRES_URL, CADRE_TEST_REDIS_URL, started by .ci/run); skipped without them.
      { test: { name: 'services', include: ['test/services/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 } },
    ],
  },
});
