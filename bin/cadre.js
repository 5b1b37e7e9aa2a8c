#!/usr/bin/env node
// The `cadre` command. Plain JavaScript on purpose: it must run far enough on any Node to say
// which Node it needs (the same versions as src/util/node-support.ts and `engines` in
// package.json; a test keeps the three in step).
import { existsSync } from 'node:fs';
import module from 'node:module';

const minimums = [
  [22, 16],
  [24, 0],
];
const version = process.versions.node;
const [major, minor] = version.split('.').map(Number);
const newest = minimums[minimums.length - 1];
if (!(major > newest[0] || minimums.some(([line, first]) => major === line && minor >= first))) {
  process.stderr.write(
    `cadre needs Node.js 22.16+ or 24+; this is Node ${version} (get Node 24 with \`nvm install 24\` or from nodejs.org, or run one command on it with \`npx -y node@24 <path to cadre> ...\`)\n`,
  );
  process.exit(2);
}

// Where `src/` is present this is a checkout of cadre (the package ships only `dist/`), and the
// command runs on the sources, through Node's type stripping, so that they never go stale
// behind a build. An installed package runs the compiled `dist/`.
const sources = new URL('../src/cli/main.ts', import.meta.url);
const fromSources = existsSync(sources);
if (fromSources && !process.features?.typescript) {
  process.stderr.write(
    `cadre's sources need Node 24 (or Node >= 22.18, with type stripping); this is Node ${version}. ` +
      'Inside the cadre repository, `npx cadre` uses the pinned Node 24.\n',
  );
  process.exit(2);
}
// Node caches the compiled code of the modules it loads, which makes the next start faster.
module.enableCompileCache?.();

const { main } = await import(fromSources ? sources.href : '../dist/cli/main.js');
const code = await main(process.argv.slice(2));
// Let pending output drain, then leave even if a socket or timer is still open.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
