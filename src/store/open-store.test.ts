import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../errors/config-error.ts';
import { openStore } from './open-store.ts';
import { redactConnectionString } from './redact-connection-string.ts';
import { sessionFixture } from './store-fixtures.ts';

const folder = mkdtempSync(join(tmpdir(), 'cadre-open-store-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('openStore', () => {
  it('opens a private store in memory', async () => {
    const store = await openStore(':memory:');
    expect(store.description).toBe('sqlite::memory:');
    await store.createSession(sessionFixture());
    expect(await store.getSession('ses_1')).not.toBeNull();
    await store.close();
  });

  it('opens a SQLite file given as a path, a sqlite: spec or a file: URL, creating its folder', async () => {
    const path = join(folder, 'deep', 'er', 'cadre.db');
    const first = await openStore(path);
    expect(first.description).toBe(`sqlite:${path}`);
    await first.createSession(sessionFixture());
    await first.close();
    for (const spec of [`sqlite:${path}`, pathToFileURL(path).href]) {
      const again = await openStore(spec);
      expect(await again.getSession('ses_1')).toEqual(sessionFixture());
      await again.close();
    }
  });

  it('reports a postgres server it cannot reach as ConfigError, without repeating its password', async () => {
    const opening = openStore('postgres://cadre:hunter2@127.0.0.1:1/cadre');
    await expect(opening).rejects.toThrow(ConfigError);
    const message = await opening.catch((error: Error) => error.message);
    expect(message).toMatch(/Cannot open the database 'postgres:\/\/\*\*\*@127\.0\.0\.1:1\/cadre': .*ECONNREFUSED/);
    expect(message).not.toContain('hunter2');
  });

  it('reports an empty spec, an unknown scheme and a file that is not a database as ConfigError', async () => {
    await expect(openStore('  ')).rejects.toThrow(ConfigError);
    await expect(openStore('mysql://root:secret@h/db')).rejects.toThrow(/Unknown database 'mysql:\/\/\*\*\*@h\/db'/);
    const notDatabase = join(folder, 'not-a-db.txt');
    writeFileSync(notDatabase, 'just some text that is long enough to not look like an empty database file at all');
    await expect(openStore(notDatabase)).rejects.toThrow(ConfigError);
  });
});

describe('redactConnectionString', () => {
  it('hides the credentials of a URL and secret query parameters, and leaves paths alone', () => {
    expect(redactConnectionString('postgres://cadre:hunter2@db:5432/cadre')).toBe('postgres://***@db:5432/cadre');
    expect(redactConnectionString('postgresql://u@h/d?password=x&sslmode=require')).toBe('postgresql://***@h/d?password=***&sslmode=require');
    expect(redactConnectionString('postgres://h/d')).toBe('postgres://h/d');
    expect(redactConnectionString('./.cadre/cadre.db')).toBe('./.cadre/cadre.db');
    expect(redactConnectionString('postgres://a:b c@bad host/d')).not.toContain('b c');
  });
});
