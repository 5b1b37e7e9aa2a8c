/**
 * The last part of `npm test`, after the Postgres pass: the end-to-end files that drive cadre only
 * through its commands, run once more with every run carried out by two `cadre worker` processes
 * per workspace, when `CADRE_TEST_REDIS_URL` names a Redis server (`.ci/run` starts one). The
 * database is Postgres when `CADRE_TEST_POSTGRES_URL` is set too, else each workspace's SQLite file
 * (its workers run on the same machine). Each workspace has its own queue prefix. Without Redis,
 * one line says the pass was skipped and why.
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
  'test/cli-workflow-run.test.ts',
];
const redis = process.env.CADRE_TEST_REDIS_URL;
if (!redis) {
  console.log('e2e on workers: skipped (CADRE_TEST_REDIS_URL is not set; .ci/run starts a Redis server and sets it)');
  process.exit(0);
}
const postgres = process.env.CADRE_TEST_POSTGRES_URL;
const root = resolve(import.meta.dirname, '..');
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const result = spawnSync(process.execPath, [vitest, 'run', '--project', 'e2e', ...files], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, CADRE_E2E_QUEUE_URL: redis, ...(postgres ? { CADRE_E2E_POSTGRES_URL: postgres } : {}) },
});
process.exit(result.status ?? 1);
