/**
 * Mutation testing: runs StrykerJS (stryker.config.mjs) on each module below against that
 * module's own tests, one module at a time, and prints each module's mutation score.
 *
 *   npm run test:mutation                      every module
 *   npm run test:mutation -- scheduler notifier  the modules whose path contains a word
 *
 * Options after the words go to Stryker (`--concurrency 2`). Exits 1 when a module scores under
 * the threshold (85 %). Reports land in reports/mutation/<module>.json and .html.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';

/** Each module and the tests that must catch its mutants. */
const modules: Record<string, string[]> = {
  'src/permissions/permissions.ts': ['src/permissions/permissions.test.ts'],
  'src/permissions/permission-rule.ts': ['src/permissions/permission-rule.test.ts'],
  'src/runs/scheduler.ts': ['src/runs/scheduler.test.ts'],
  'src/delegation/truncate-result.ts': ['src/delegation/truncate-result.test.ts'],
  'src/sessions/notifier.ts': ['src/sessions/notifier.test.ts'],
  'src/runs/run-ledger.ts': ['src/runs/run-ledger.test.ts'],
  'src/models/attempt-control.ts': ['src/models/attempt-control.test.ts', 'src/models/reliable-model.test.ts'],
  'src/models/compose-model.ts': ['src/models/compose-model.test.ts'],
  'src/models/pipe-parts.ts': ['src/models/pipe-parts.test.ts'],
};
const threshold = 85;

const root = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const words = args.filter((arg) => !arg.startsWith('-') && !/^\d+$/.test(arg));
const strykerOptions = args.filter((arg) => !words.includes(arg));
const selected = Object.keys(modules).filter((path) => words.length === 0 || words.some((word) => path.includes(word)));
if (selected.length === 0) {
  console.error(`No module matches ${words.join(', ')}. Modules: ${Object.keys(modules).join(', ')}`);
  process.exit(2);
}

interface Mutant {
  status: string;
}
const scores: Array<{ module: string; score: number; counts: Record<string, number> }> = [];
mkdirSync(resolve(root, 'reports', 'mutation'), { recursive: true });
for (const module of selected) {
  console.log(`\n=== ${module} against ${modules[module].join(', ')}`);
  const stryker = resolve(root, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js');
  const run = spawnSync(process.execPath, [stryker, 'run', 'stryker.config.mjs', '--mutate', module, ...strykerOptions], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, CADRE_MUTATION_TESTS: modules[module].join(',') },
  });
  const report = resolve(root, 'reports', 'mutation', 'mutation.json');
  if (run.status !== 0 || !existsSync(report)) {
    console.error(`Stryker failed on ${module} (exit ${run.status}).`);
    process.exit(1);
  }
  const name = basename(module, '.ts');
  copyFileSync(report, resolve(root, 'reports', 'mutation', `${name}.json`));
  const html = resolve(root, 'reports', 'mutation', 'mutation.html');
  if (existsSync(html)) copyFileSync(html, resolve(root, 'reports', 'mutation', `${name}.html`));
  const files = (JSON.parse(readFileSync(report, 'utf8')) as { files: Record<string, { mutants: Mutant[] }> }).files;
  const counts: Record<string, number> = {};
  for (const file of Object.values(files)) for (const mutant of file.mutants) counts[mutant.status] = (counts[mutant.status] ?? 0) + 1;
  const detected = (counts.Killed ?? 0) + (counts.Timeout ?? 0);
  const valid = detected + (counts.Survived ?? 0) + (counts.NoCoverage ?? 0);
  scores.push({ module, score: valid === 0 ? 100 : (100 * detected) / valid, counts });
}

console.log('\nMutation scores (killed + timed out, of all valid mutants):');
for (const { module, score, counts } of scores) {
  console.log(
    `  ${score.toFixed(1).padStart(5)} %  ${module}  (${Object.entries(counts)
      .map(([status, count]) => `${status} ${count}`)
      .join(', ')})`,
  );
}
const low = scores.filter(({ score }) => score < threshold);
if (low.length > 0) {
  console.error(`Under ${threshold} %: ${low.map(({ module }) => module).join(', ')}`);
  process.exit(1);
}
