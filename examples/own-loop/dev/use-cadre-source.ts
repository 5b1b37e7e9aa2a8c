/**
 * Only for running the example inside cadre's repository (`npm run example:own-loop`): resolves
 * `cadre` and `cadre/testing` to the repository's sources, so no build is needed. An app that
 * installed cadre from npm does not need this file.
 */
import { registerHooks } from 'node:module';

const sources: Record<string, string> = {
  cadre: '../../../src/index.ts',
  'cadre/testing': '../../../src/testing/index.ts',
};

registerHooks({
  resolve(specifier, context, nextResolve) {
    const source = sources[specifier];
    return nextResolve(source ? new URL(source, import.meta.url).href : specifier, context);
  },
});
