// @ts-check
/**
 * Mutation testing (StrykerJS with its vitest runner): `npm run test:mutation` runs it for each
 * module of scripts/mutation.ts against that module's own tests, one module at a time.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  // Stryker rewrites the tsconfig with the `typescript` package's JS API, which TypeScript 7 (the
  // native compiler) no longer has. Vitest does not read the tsconfig, so point Stryker at none.
  tsconfigFile: 'stryker-has-no-tsconfig.json',
  checkers: [],
  concurrency: 1,
  coverageAnalysis: 'perTest',
  reporters: ['clear-text', 'progress', 'json'],
  ignorePatterns: ['dist', 'bench', 'examples', 'docs', 'reports', 'coverage', '.cadre'],
  thresholds: { high: 90, low: 85, break: null },
  timeoutMS: 10000,
  cleanTempDir: 'always',
};
