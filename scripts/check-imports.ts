/**
 * Keeps the layering of STYLE.md (test code, fixtures included, is left out): imports go one way (cli, server → runtime → sessions →
 * delegation → executors → runs → store, models, loop; export above store; mcp/server beside server, mcp/client beside
 * executors), and no file cycles. And the clock is injected: no `Date.now()` or `Math.random()` outside `util/clock.ts`
 * (code takes a `NowMs`, `Random` or `NewId` from its options, defaulting to the ones there). Exits 1 on a breach.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', 'src');
const rank: Record<string, number> = {
  util: 0,
  errors: 0,
  logging: 0,
  store: 1,
  models: 1,
  config: 1,
  testing: 1,
  loop: 1,
  output: 1,
  permissions: 1,
  coordination: 1,
  agents: 2,
  tools: 2,
  export: 2,
  runs: 3,
  executors: 4,
  approvals: 4,
  telemetry: 4,
  'mcp/client': 4,
  worktrees: 4,
  delegation: 5,
  harnesses: 5,
  sessions: 6,
  workflows: 6.5,
  runtime: 7,
  embed: 7,
  server: 8,
  'mcp/server': 8,
  'mcp/index.ts': 8,
  cli: 9,
  'index.ts': 10,
};

function files(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return files(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.includes('.case.') && !entry.name.endsWith('-fixtures.ts')
      ? [path]
      : [];
  });
}

/** A folder's room; `mcp/` holds two, the client (under runtime) and the server (beside server/). */
const room = (path: string) => {
  const [first, second] = relative(root, path).split('/');
  return rank[`${first}/${second}`] === undefined ? first : `${first}/${second}`;
};
const graph = new Map<string, string[]>();
const problems: string[] = [];
/** The one file that reads the system's clock and random numbers. */
const clockFile = join(root, 'util', 'clock.ts');
for (const file of files(root)) {
  const text = readFileSync(file, 'utf8');
  if (file !== clockFile) {
    text.split('\n').forEach((line, index) => {
      const read = /\b(Date\.now|Math\.random)\b/.exec(line);
      if (read)
        problems.push(`${relative(root, file)}:${index + 1}: ${read[1]}() outside util/clock.ts; take an injected NowMs, Random or NewId (util/clock.ts)`);
    });
  }
  const targets = [...text.matchAll(/^(?:import|export)[^'"]*?from\s+'(\.[^']+)'/gm)].map((match) => resolve(dirname(file), match[1]));
  graph.set(file, targets);
  const from = room(file);
  for (const target of targets) {
    const to = room(target);
    if (rank[from] === undefined || rank[to] === undefined) problems.push(`${relative(root, file)}: unknown room '${rank[from] === undefined ? from : to}'`);
    else if (rank[to] > rank[from]) problems.push(`${relative(root, file)} imports ${relative(root, target)}: ${from} must not depend on ${to}`);
  }
}

const state = new Map<string, 'visiting' | 'done'>();
function visit(file: string, trail: string[]): void {
  if (state.get(file) === 'done') return;
  if (state.get(file) === 'visiting') {
    problems.push(`cycle: ${[...trail.slice(trail.indexOf(file)), file].map((path) => relative(root, path)).join(' → ')}`);
    return;
  }
  state.set(file, 'visiting');
  for (const target of graph.get(file) ?? []) if (graph.has(target)) visit(target, [...trail, file]);
  state.set(file, 'done');
}
for (const file of graph.keys()) visit(file, []);

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`imports ok: ${graph.size} files, one-way layers, no cycles, the clock injected`);
