import pg from 'pg';

/**
 * The servers the scale-out tests need, started by `.ci/run` (or by hand) on 127.0.0.1:
 * `CADRE_TEST_POSTGRES_URL` (a database the tests may create schemas in) and
 * `CADRE_TEST_REDIS_URL`. Without them those tests are skipped, and their names say why.
 */
export const postgresUrl = process.env.CADRE_TEST_POSTGRES_URL;
export const redisUrl = process.env.CADRE_TEST_REDIS_URL;

/** Why Postgres tests are skipped, for their describe name. */
export const postgresReason = postgresUrl ? '' : ' [skipped: set CADRE_TEST_POSTGRES_URL, as .ci/run does]';
export const redisReason = redisUrl && postgresUrl ? '' : ' [skipped: set CADRE_TEST_POSTGRES_URL and CADRE_TEST_REDIS_URL, as .ci/run does]';

let counter = 0;

/** A fresh schema name, unique to this test process. */
export function freshSchema(): string {
  return `cadre_test_${process.pid}_${Date.now().toString(36)}_${counter++}`;
}

/** The URL of one schema of the test database (`?schema=`). */
export function schemaUrl(schema: string): string {
  const url = new URL(postgresUrl!);
  url.searchParams.set('schema', schema);
  return url.toString();
}

/** Drops the given schemas and everything in them. */
export async function dropSchemas(schemas: readonly string[]): Promise<void> {
  if (!postgresUrl || schemas.length === 0) return;
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
