import { describe, expect, it } from 'vitest';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { cadreCommand, databaseFlag, printClosingHints } from './closing-hints.ts';

describe('databaseFlag', () => {
  it('repeats nothing for the folder default, or for the database CADRE_DB names', () => {
    expect(databaseFlag('/work', {}, '/work/.cadre/cadre.db')).toBeUndefined();
    expect(databaseFlag('/work', { CADRE_DB: 'postgres://cadre:hunter2@db/cadre' }, 'postgres://cadre:hunter2@db/cadre')).toBeUndefined();
    expect(databaseFlag('/work', { CADRE_DB: 'data/team.db' }, '/work/data/team.db')).toBeUndefined();
  });

  it('shows a URL as given when it holds no secret, so the pasted command works', () => {
    expect(databaseFlag('/work', {}, 'postgres://cadre@127.0.0.1:55432/postgres?schema=team')).toBe(
      '--db postgres://cadre@127.0.0.1:55432/postgres?schema=team',
    );
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

describe('cadreCommand', () => {
  it("is npx cadre when npm started cadre (npx cadre, npm run demo), whose PATH is not the shell's", () => {
    expect(cadreCommand({ npm_command: 'exec', PATH: '/anything' }, () => true)).toBe('npx cadre');
    expect(cadreCommand({ npm_command: 'run-script', PATH: '/anything' }, () => true)).toBe('npx cadre');
  });

  it('is cadre when the PATH has an executable cadre, else npx cadre (a clone, a local install)', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'cadre-path-'));
    try {
      expect(cadreCommand({ PATH: `/nowhere${delimiter}${folder}` })).toBe('npx cadre');
      await writeFile(join(folder, 'cadre'), '#!/bin/sh\n', { mode: 0o644 });
      expect(cadreCommand({ PATH: folder })).toBe('npx cadre');
      await chmod(join(folder, 'cadre'), 0o755);
      expect(cadreCommand({ PATH: `/nowhere${delimiter}${folder}` })).toBe('cadre');
      expect(cadreCommand({})).toBe('npx cadre');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('printClosingHints', () => {
  it('writes the hints with the command a person can run', () => {
    let text = '';
    const stderr = { write: (chunk: string) => ((text += chunk), true) };
    printClosingHints(stderr, { sessionId: 'ses_1', status: 'completed', command: 'npx cadre', databaseFlag: '--db demo.db' });
    expect(text).toBe(
      [
        '',
        'Session ses_1 (completed).',
        '  export:   npx cadre export ses_1 --format markdown --db demo.db',
        '  continue: npx cadre run --session ses_1 --db demo.db "..."',
        '',
      ].join('\n'),
    );
    text = '';
    printClosingHints(stderr, { sessionId: 'ses_1', status: 'failed' });
    expect(text).toContain('  export:   cadre export ses_1 --format markdown\n');
  });
});
