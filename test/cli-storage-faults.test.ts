import { spawn } from 'node:child_process';
import { chmod, copyFile, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../src/store/sqlite/migrations.ts';
import { cadreBin, createWorkspace, type CadreResult, type Workspace } from './helpers/cadre-cli.ts';

let workspace: Workspace;
let sessionId: string;
let runId: string;
beforeAll(async () => {
  workspace = await createWorkspace();
  // Commands run as an unprivileged user when the tests run as root, who could write anything.
  await chmod(workspace.cwd, 0o755);
  const result = await workspace.run(['run', ...workspace.modelFlags, 'delegate please']);
  expect(result.code).toBe(0);
  const [session] = await workspace.json<Array<{ id: string }>>(['sessions']);
  sessionId = session.id;
  const [run] = await workspace.json<Array<{ id: string }>>(['runs']);
  runId = run.id;
});
afterAll(() => workspace.close());

const asRoot = process.getuid?.() === 0;

/** `cadre ARGS` as a user who cannot write what the test's user created (nobody, when run as root). */
function runUnprivileged(args: readonly string[]): Promise<CadreResult> {
  const child = spawn(process.execPath, [cadreBin, ...args], {
    cwd: workspace.cwd,
    env: workspace.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, ...output })));
}

async function withCopy<T>(name: string, work: (path: string) => Promise<T>): Promise<T> {
  const path = join(workspace.cwd, name);
  await copyFile(workspace.database, path);
  try {
    return await work(path);
  } finally {
    await rm(path, { force: true });
    await rm(`${path}-wal`, { force: true });
    await rm(`${path}-shm`, { force: true });
  }
}

describe('a database this process cannot write', () => {
  const readOnlyMessage = (path: string) =>
    `cadre: The database ${path} is read-only (its file, its folder or the disk cannot be written), and this command writes to it. Make it writable, or use another --db; commands that only read (runs, show, export, sessions, approvals) still work.`;

  it.each([
    ['a read-only file in a writable folder', 0o444, 0o777],
    ['a read-only folder', 0o644, 0o555],
  ])('%s: runs, show, export, sessions, approvals and agents read it; run, stop and approve refuse, saying it is read-only', async (_name, fileMode, folderMode) => {
    const folder = join(workspace.cwd, '.cadre');
    await chmod(workspace.database, fileMode);
    await chmod(folder, folderMode);
    try {
      const db = ['--db', workspace.database];
      const reads: Array<[string[], RegExp]> = [
        [["runs", ...db], new RegExp(`${runId}\\s+completed\\s+scout`)],
        [['show', runId, ...db], /completed/],
        [['export', sessionId, ...db], new RegExp(`"id": "${sessionId}"`)],
        [['sessions', ...db], new RegExp(sessionId)],
        [['approvals', ...db], /no pending approvals/],
        [['agents'], /^scout\s+subagent/m],
      ];
      for (const [args, expected] of reads) {
        const result = await runUnprivileged(args);
        expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
        expect(result.stdout).toMatch(expected);
      }
      const writes = [
        ['run', ...workspace.modelFlags, 'echo this'],
        ['stop', runId, ...db],
        ['approve', 'apr_1', ...db],
      ];
      for (const args of writes) {
        const result = await runUnprivileged(args);
        expect({ args, code: result.code, stderr: result.stderr.trim() }).toEqual({ args, code: 2, stderr: readOnlyMessage(workspace.database) });
      }
    } finally {
      await chmod(folder, 0o755);
      await chmod(workspace.database, 0o644);
    }
  });
});

describe('a database cadre cannot use is refused at open, naming the file and what to do, exit 2', () => {
  it('a damaged database', async () => {
    await withCopy('damaged.db', async (path) => {
      const bytes = await readFile(path);
      const pageSize = bytes.readUInt16BE(16);
      bytes.fill(0x5a, pageSize, pageSize * 3);
      await writeFile(path, bytes);
      for (const args of [['runs'], ['run', ...workspace.modelFlags.slice(0, 4), 'echo this']]) {
        const result = await workspace.run([...args, '--db', path]);
        expect(result.code).toBe(2);
        expect(result.stderr).toMatch(new RegExp(`^cadre: The database ${path} is damaged \\(.+\\)\\. Restore it from a backup, or move it aside \\(with its -wal and -shm files\\) so cadre starts a new one\\.\\n$`));
      }
    });
  });

  it('a file that is not a database, and a SQLite database of another program', async () => {
    const notes = join(workspace.cwd, 'notes.txt');
    const result = await workspace.run(['runs', '--db', notes]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`cadre: The file ${notes} is not a SQLite database, not a cadre database. Point --db (or CADRE_DB, or db in cadre.config.json) at cadre's database, or move the file aside so cadre creates a new one there.`);
    expect(await readFile(notes, 'utf8')).toBe('Remember the milk.\n');
    const other = join(workspace.cwd, 'photos.db');
    const database = new DatabaseSync(other);
    database.exec('CREATE TABLE photos (id INTEGER PRIMARY KEY)');
    database.close();
    const run = await workspace.run(['run', ...workspace.modelFlags.slice(0, 4), '--db', other, 'echo this']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`cadre: The file ${other} is a SQLite database of another program, not a cadre database.`);
  });

  it('a database of a newer cadre, left byte for byte as it was', async () => {
    await withCopy('newer.db', async (path) => {
      const database = new DatabaseSync(path);
      database.exec('PRAGMA journal_mode = DELETE; PRAGMA user_version = 999');
      database.close();
      const before = await readFile(path);
      const latest = migrations.at(-1)!.version;
      for (const args of [['runs'], ['run', ...workspace.modelFlags.slice(0, 4), 'echo this']]) {
        const result = await workspace.run([...args, '--db', path]);
        expect(result.code).toBe(2);
        expect(result.stderr).toBe(`cadre: The database ${path} has schema version 999, newer than this build of cadre knows (${latest}); it was left untouched. Upgrade cadre, or use another --db.\n`);
      }
      expect((await readFile(path)).equals(before)).toBe(true);
    });
  });
});
