import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// Node 24 no longer warns about SQLite, so a child process plays Node 22: its module loader
// emits the warning, as Node 22 and 23 do when node:sqlite is first loaded.
const child = `
  const real = process.getBuiltinModule;
  process.getBuiltinModule = (id) => {
    process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning');
    process.emitWarning('Another feature is experimental', 'ExperimentalWarning');
    process.emitWarning('SQLite is an experimental feature, said as a deprecation', 'DeprecationWarning');
    return real(id);
  };
  const { loadSqlite } = await import(${JSON.stringify(new URL('./load-sqlite.ts', import.meta.url).href)});
  const sqlite = loadSqlite();
  console.log(typeof sqlite.DatabaseSync, loadSqlite() === sqlite);
  process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning');
`;

describe('loadSqlite', () => {
  it("drops exactly Node's SQLite ExperimentalWarning while node:sqlite loads, and no other warning", () => {
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', child], { encoding: 'utf8' });
    expect(result.stdout.trim()).toBe('function true');
    expect(result.stderr).toContain('ExperimentalWarning: Another feature is experimental');
    expect(result.stderr).toContain('DeprecationWarning: SQLite is an experimental feature, said as a deprecation');
    // Only while loading: the same warning emitted afterwards is shown, once.
    expect(result.stderr.match(/ExperimentalWarning: SQLite is an experimental feature/g)).toHaveLength(1);
  });
});
