import { fileURLToPath } from 'node:url';
import { CadreError } from '../errors/cadre-error.ts';
import { ConfigError } from '../errors/config-error.ts';
import { redactConnectionString } from './redact-connection-string.ts';
import { createSqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /**
   * Only reads will be made: a SQLite file this process cannot write is opened read-only instead
   * of refused (immutable, with a warning, when even its `-shm` cannot be used).
   * @default false
   */
  readOnly?: boolean | undefined;
  /** Told about a database opened with a limitation. @default none */
  onWarning?: ((message: string) => void) | undefined;
}

/**
 * Opens the store a spec names (`--db`, `CADRE_DB`, `db` in the config):
 * `:memory:`, a SQLite file path (`./.cadre/cadre.db`, `sqlite:./x.db`, `file:///...`),
 * or a `postgres://` URL. Errors are `ConfigError`s whose messages never hold a password.
 *
 * @example
 * const store = await openStore('./.cadre/cadre.db');
 */
export async function openStore(spec: string, { readOnly, onWarning }: OpenStoreOptions = {}): Promise<Store> {
  const trimmed = spec.trim();
  if (trimmed === '') {
    throw new ConfigError('No database given: set `db` in cadre.config.json, CADRE_DB, or --db.');
  }
  if (/^postgres(ql)?:\/\//i.test(trimmed)) return openPostgres(trimmed);
  try {
    return createSqliteStore({ path: sqlitePath(trimmed), readOnly, onWarning });
  } catch (error) {
    if (CadreError.isInstance(error)) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError(`Cannot open the database '${redactConnectionString(trimmed)}': ${reason}`, { cause: error });
  }
}

/**
 * The Postgres store, loaded only now: `pg` and the engine stay out of the embedded default's
 * import (its size and cold start). Errors name the server without its password.
 */
async function openPostgres(url: string): Promise<Store> {
  let engine: typeof import('./postgres/postgres-store.ts');
  try {
    engine = await import('./postgres/postgres-store.ts');
  } catch (error) {
    throw new ConfigError(`The Postgres store needs the 'pg' package: npm install pg (${(error as Error).message.split('\n')[0]}).`, { cause: error });
  }
  try {
    return await engine.openPostgresStore({ connectionString: url });
  } catch (error) {
    if (CadreError.isInstance(error)) throw error;
    const reason = redactConnectionString(error instanceof Error ? error.message : String(error));
    throw new ConfigError(`Cannot open the database '${redactConnectionString(url)}': ${reason}`, { cause: error });
  }
}

function sqlitePath(spec: string): string {
  if (/^sqlite:/i.test(spec)) return sqlitePath(spec.slice('sqlite:'.length));
  if (/^file:/i.test(spec)) return fileURLToPath(spec);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(spec)) {
    throw new ConfigError(`Unknown database '${redactConnectionString(spec)}'. Use ':memory:', a SQLite file path, or a postgres:// URL.`);
  }
  return spec;
}
