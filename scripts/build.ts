/**
 * `npm run build` (and `prepack`): compiles `src/` to JavaScript with declarations in `dist/`
 * (tsconfig.build.json leaves out tests, shared test cases and fixtures), then copies the files
 * the code reads at run time: tool descriptions and the dashboard's assets.
 * @module
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const source = join(root, 'src');
const target = join(root, 'dist');

rmSync(target, { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });

function runTimeFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' || entry.name === '__snapshots__' ? [] : runTimeFiles(path);
    return entry.name.endsWith('.ts') ? [] : [path];
  });
}
for (const file of runTimeFiles(source)) cpSync(file, join(target, relative(source, file)));
