import type * as NodeSqlite from 'node:sqlite';

let loaded: typeof NodeSqlite | undefined;

function isSqliteWarning(warning: string | Error, rest: unknown[]): boolean {
  const message = typeof warning === 'string' ? warning : warning.message;
  const first = rest[0];
  const type = typeof warning !== 'string' ? warning.name : typeof first === 'string' ? first : (first as { type?: string } | undefined)?.type;
  return type === 'ExperimentalWarning' && message.startsWith('SQLite is an experimental feature');
}

/**
 * `node:sqlite`, loaded on first use. Loaded this way rather than by a static import, the
 * library's entry can link (and say which Node it needs) on a Node without the module, and the
 * "SQLite is an experimental feature" warning that Node 22 and 23 print on every start is
 * dropped: only that one warning, only while the module loads; every other warning still shows.
 */
export function loadSqlite(): typeof NodeSqlite {
  if (loaded !== undefined) return loaded;
  const emitWarning = process.emitWarning;
  process.emitWarning = function emitWarningButSqlite(this: unknown, warning: string | Error, ...rest: unknown[]) {
    if (isSqliteWarning(warning, rest)) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    loaded = process.getBuiltinModule('node:sqlite') as typeof NodeSqlite;
  } finally {
    process.emitWarning = emitWarning;
  }
  return loaded;
}
