import { describe, expect, it } from 'vitest';
import { databaseFlag } from './closing-hints.ts';

describe('databaseFlag', () => {
  it('repeats nothing for the folder default, or for the database CADRE_DB names', () => {
    expect(databaseFlag('/work', {}, '/work/.cadre/cadre.db')).toBeUndefined();
    expect(databaseFlag('/work', { CADRE_DB: 'postgres://cadre:hunter2@db/cadre' }, 'postgres://cadre:hunter2@db/cadre')).toBeUndefined();
    expect(databaseFlag('/work', { CADRE_DB: 'data/team.db' }, '/work/data/team.db')).toBeUndefined();
  });

  it('shows a URL as given when it holds no secret, so the pasted command works', () => {
    expect(databaseFlag('/work', {}, 'postgres://cadre@127.0.0.1:55432/postgres?schema=team')).toBe('--db postgres://cadre@127.0.0.1:55432/postgres?schema=team');
  });

  it('never shows a password or a secret parameter', () => {
    expect(databaseFlag('/work', {}, 'postgres://cadre:hunter2@db:5432/cadre')).toBe('--db postgres://***@db:5432/cadre');
    expect(databaseFlag('/work', {}, 'postgres://db:5432/cadre?password=hunter2')).not.toContain('hunter2');
    expect(databaseFlag('/work', { CADRE_DB: 'postgres://other' }, 'postgres://cadre:hunter2@db/cadre')).not.toContain('hunter2');
  });

  it('names a file relative to the folder when it is inside it, else as given', () => {
    expect(databaseFlag('/work', {}, '/work/data/team.db')).toBe('--db data/team.db');
    expect(databaseFlag('/work', {}, '/elsewhere/team.db')).toBe('--db /elsewhere/team.db');
  });
});
