import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './workers-fixtures.ts';

/** Where `initdb` and `pg_ctl` are: beside `CADRE_TEST_PG_CTL` when set, else /usr/local/bin. */
const binaries = process.env.CADRE_TEST_PG_CTL ? join(process.env.CADRE_TEST_PG_CTL, '..') : '/usr/local/bin';

/** Whether a private cluster can be made here (`initdb` is there). */
export const privatePostgresAvailable = existsSync(join(binaries, 'initdb'));

/** A Postgres cluster of one test's own, on 127.0.0.1, so restarting it disturbs no other test. */
export interface PrivatePostgres {
  /** `postgres://cadre@127.0.0.1:PORT/postgres`. */
  url: string;
  /** Restarts the server (`pg_ctl restart -m fast`), waiting until it is back. */
  restart(): void;
  /** Stops the server at once and removes its folder. */
  stop(): void;
}

/** initdb refuses root: as root, the cluster belongs to `nobody`. */
function asPostgres(command: string, args: string[]): void {
  if (process.getuid?.() === 0) execFileSync('runuser', ['-u', 'nobody', '--', join(binaries, command), ...args], { stdio: 'ignore' });
  else execFileSync(join(binaries, command), args, { stdio: 'ignore' });
}

/** Makes and starts a {@link PrivatePostgres} in a new temporary folder named after `prefix`. */
export async function startPrivatePostgres(prefix: string): Promise<PrivatePostgres> {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  if (process.getuid?.() === 0) chownSync(folder, 65534, 65534);
  const port = await freePort();
  const options = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1`;
  const pgCtl = (...args: string[]) => asPostgres('pg_ctl', ['-D', join(folder, 'data'), ...args]);
  asPostgres('initdb', ['-D', join(folder, 'data'), '-U', 'cadre', '--auth=trust', '-E', 'UTF8']);
  pgCtl('-l', join(folder, 'log'), '-w', '-o', options, 'start');
  return {
    url: `postgres://cadre@127.0.0.1:${port}/postgres`,
    restart: () => pgCtl('-m', 'fast', '-w', 'restart', '-o', options),
    stop() {
      try {
        pgCtl('-m', 'immediate', 'stop');
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
  };
}
