/**
 * The last part of `npm test`: the end-to-end files that drive cadre only through its commands,
 * run once more on Postgres when `CADRE_TEST_POSTGRES_URL` names a server (`.ci/run` starts one),
 * each workspace in a schema of its own. Without it, one line says the pass was skipped and why.
 * (The crash, storage-fault and approval files also open the SQLite file themselves.)
 * @module
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const files = [
  'test/cli-run.test.ts',
  'test/cli-stop.test.ts',
  'test/cli-export.test.ts',
  'test/cli-reliability.test.ts',
  'test/cli-agent-files.test.ts',
  'test/cli-errors.test.ts',
  'test/cli-send.test.ts',
  'test/cli-delegation-rules.test.ts',
  'test/cli-structured-output.test.ts',
];
const url = process.env.CADRE_TEST_POSTGRES_URL;
if (!url) {
  console.log('e2e on Postgres: skipped (CADRE_TEST_POSTGRES_URL is not set; .ci/run starts a Postgres server and sets it)');
  process.exit(0);
}
const root = resolve(import.meta.dirname, '..');
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const result = spawnSync(process.execPath, [vitest, 'run', '--project', 'e2e', ...files], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, CADRE_E2E_POSTGRES_URL: url },
});
process.exit(result.status ?? 1);
