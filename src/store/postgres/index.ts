/**
 * `cadre/postgres`: the Postgres store and LISTEN/NOTIFY coordination, for several processes or
 * machines on one database. Needs the `pg` package; loaded only by those who import it (or set
 * `db` to a `postgres://` URL).
 */
export { openPostgresStore, type PostgresStoreOptions } from './postgres-store.ts';
export { pgMigrations, type PgMigration } from './pg-migrations.ts';
export { createPostgresCoordination, type PostgresCoordinationOptions } from '../../coordination/postgres-coordination.ts';
