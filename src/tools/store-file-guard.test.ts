import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseFiles } from '../store/sqlite/open-database.ts';
import { createStoreFileGuard } from './store-file-guard.ts';
import { createWorkspaceTools } from './workspace-tools.ts';

const root = mkdtempSync(join(tmpdir(), 'cadre-store-guard-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// Stand-ins for the store's files: text holding the word the searches look for, so a search that
// opened one would show it. (Tools must refuse them by path, before any open.)
mkdirSync(join(root, '.cadre', 'agents'), { recursive: true });
const database = join(root, '.cadre', 'cadre.db');
for (const file of [database, `${database}-wal`, `${database}-shm`]) writeFileSync(file, 'needle in the store\n');
writeFileSync(join(root, '.cadre', 'agents', 'helper.md'), 'needle in an agent file\n');
writeFileSync(join(root, 'notes.txt'), 'needle in the notes\n');
symlinkSync(join('.cadre', 'cadre.db'), join(root, 'db-link'));
symlinkSync('.cadre', join(root, 'state'));
linkSync(database, join(root, 'hard-link.txt'));

const storeFiles = databaseFiles(database);
const tools = createWorkspaceTools({ root, storeFiles });

async function call(name: string, input: Record<string, unknown>): Promise<string> {
  const tool = tools[name] as unknown as { execute: (input: unknown, options: unknown) => Promise<string> };
  try {
    return await tool.execute(input, { toolCallId: 'call_1', messages: [], abortSignal: new AbortController().signal });
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

const refusal = (shown: string) =>
  `error: '${shown}' is one of cadre's own database files; no tool may open it (opening it would break the database's locks in this process). Read runs with agent_output, or ask the person to use cadre show.`;

describe('the workspace tools keep off the store files', () => {
  it.each([
    ['.cadre/cadre.db', '.cadre/cadre.db'],
    ['.cadre/cadre.db-wal', '.cadre/cadre.db-wal'],
    ['./src/../.cadre//cadre.db-shm', '.cadre/cadre.db-shm'],
    ['.CADRE/Cadre.DB', '.CADRE/Cadre.DB'],
    ['state/cadre.db', 'state/cadre.db'],
    ['db-link', 'db-link'],
    ['hard-link.txt', 'hard-link.txt'],
    [database, '.cadre/cadre.db'],
  ])('read_file refuses %s', async (path, shown) => {
    expect(await call('read_file', { path })).toBe(refusal(shown));
  });

  it('refuses writes and edits of the files, the -journal SQLite may create included, and creates nothing', async () => {
    expect(await call('write_file', { path: '.cadre/cadre.db-journal', content: 'x' })).toBe(refusal('.cadre/cadre.db-journal'));
    expect(await call('write_file', { path: 'state/cadre.db-journal', content: 'x' })).toBe(refusal('state/cadre.db-journal'));
    expect(existsSync(`${database}-journal`)).toBe(false);
    expect(await call('edit_file', { path: '.cadre/cadre.db', old_string: 'needle', new_string: 'pin' })).toBe(refusal('.cadre/cadre.db'));
    expect(await call('write_file', { path: 'hard-link.txt', content: 'x' })).toBe(refusal('hard-link.txt'));
    expect(readFileSync(database, 'utf8')).toBe('needle in the store\n');
  });

  it('leaves them out of list_files and grep, whatever the path, and refuses grep of one by name', async () => {
    expect((await call('list_files', { path: '.cadre' })).split('\n')).toEqual(['.cadre/agents/helper.md']);
    expect(await call('list_files', {})).not.toMatch(/cadre\.db/);
    expect((await call('grep', { pattern: 'needle' })).split('\n')).toEqual([
      '.cadre/agents/helper.md:1: needle in an agent file',
      'notes.txt:1: needle in the notes',
    ]);
    expect(await call('grep', { pattern: 'needle', path: '.cadre' })).toBe('.cadre/agents/helper.md:1: needle in an agent file');
    expect(await call('grep', { pattern: 'needle', path: '.cadre/cadre.db-wal' })).toBe(refusal('.cadre/cadre.db-wal'));
  });

  it('opens everything when the store has no files (a server database)', async () => {
    const open = createWorkspaceTools({ root });
    const read = open.read_file as unknown as { execute: (input: unknown, options: unknown) => Promise<string> };
    expect(await read.execute({ path: '.cadre/cadre.db' }, { toolCallId: 'call_1', messages: [] })).toContain('needle in the store');
    expect(createStoreFileGuard([]).active).toBe(false);
  });

  it('tells names apart by Unicode normalization and case, as lenient file systems do', async () => {
    const guard = createStoreFileGuard([join(root, 'caf\u00e9.db')]);
    expect(await guard.isStoreName(join(root, 'CAFE\u0301.db'))).toBe(true);
    expect(await guard.isStoreName(join(root, 'cafe.db'))).toBe(false);
    expect(await guard.isStoreName(join(root, 'caf\u00e9.db-wal'))).toBe(false);
  });
});
