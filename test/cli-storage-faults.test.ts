import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { chmod, copyFile, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../src/store/sqlite/migrations.ts';
import { startScriptedServer, type ScriptedRequest, type ScriptedServer, type ScriptedTurn } from '../src/testing/index.ts';
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
  ])(
    '%s: runs, show, export, sessions, approvals and agents read it; run, stop and approve refuse, saying it is read-only',
    async (_name, fileMode, folderMode) => {
      const folder = join(workspace.cwd, '.cadre');
      await chmod(workspace.database, fileMode);
      await chmod(folder, folderMode);
      try {
        const db = ['--db', workspace.database];
        const reads: Array<[string[], RegExp]> = [
          [['runs', ...db], new RegExp(`${runId}\\s+completed\\s+scout`)],
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
    },
  );
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
        expect(result.stderr).toMatch(
          new RegExp(
            `^cadre: The database ${path} is damaged \\(.+\\)\\. Restore it from a backup, or move it aside \\(with its -wal and -shm files\\) so cadre starts a new one\\.\\n$`,
          ),
        );
      }
    });
  });

  it('a file that is not a database, and a SQLite database of another program', async () => {
    const notes = join(workspace.cwd, 'notes.txt');
    const result = await workspace.run(['runs', '--db', notes]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `cadre: The file ${notes} is not a SQLite database (or its header is damaged), not a cadre database. Point --db (or CADRE_DB, or db in cadre.config.json) at cadre's database, or move the file aside so cadre creates a new one there; if it was cadre's database, restore it from a backup.`,
    );
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
        expect(result.stderr).toBe(
          `cadre: The database ${path} has schema version 999, newer than this build of cadre knows (${latest}); it was left untouched. Upgrade cadre, or use another --db.\n`,
        );
      }
      expect((await readFile(path)).equals(before)).toBe(true);
    });
  });
});

describe('a database of an older cadre', () => {
  it('is upgraded in place once SQLite copied it aside, says so, and exports as the older cadre did', async () => {
    const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'store-v4');
    const path = join(workspace.cwd, 'older.db');
    await copyFile(join(fixtures, 'cadre.db'), path);
    try {
      const expected = JSON.parse(await readFile(join(fixtures, 'exports.json'), 'utf8')) as Record<string, { exported_at: string }>;
      const result = await workspace.run(['export', 'ses_1', '--format', 'json', '--db', path]);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe(
        `cadre: warning: The database ${path} was upgraded from schema version 4 to ${migrations.at(-1)!.version}; older cadre builds cannot open it now. A copy of it as it was is at ${path}.bak-v4.\n`,
      );
      const exported = JSON.parse(result.stdout) as { exported_at: string };
      expect({ ...exported, exported_at: expected.ses_1.exported_at }).toEqual(expected.ses_1);
      const backup = new DatabaseSync(`${path}.bak-v4`, { readOnly: true });
      expect(backup.prepare('PRAGMA user_version').get()).toEqual({ user_version: 4 });
      backup.close();
      // Upgraded once: the next command says nothing.
      expect((await workspace.run(['sessions', '--db', path])).stderr).toBe('');
    } finally {
      for (const suffix of ['', '-wal', '-shm', '.bak-v4']) await rm(`${path}${suffix}`, { force: true });
    }
  });
});

/** Whether this machine lets the tests mount a small tmpfs (root with the capability): a real full disk. */
function canMountTmpfs(): boolean {
  if (process.platform !== 'linux' || !asRoot) return false;
  const probe = mkdtempSync(join(tmpdir(), 'cadre-tmpfs-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** stderr without the lines of the run's progress. */
function withoutRunLines(stderr: string): string {
  return stderr.replace(/^\[run_\w+ scout\] .*\n/gm, '');
}

describe('the database fails under cadre run', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    // The first wait of each scout outlasts a lease renewal (the commit that meets the fault); a
    // resumed one is short.
    const waited = new Set<string>();
    server = await startScriptedServer({
      script: (request: ScriptedRequest): ScriptedTurn => {
        const last = request.messages.findLast((message) => message.role === 'user')?.content ?? '';
        if (request.system.includes('You are the scout')) {
          const first = !waited.has(last);
          waited.add(last);
          return { delay_ms: first ? 12_000 : 100, text: 'Waited.' };
        }
        if (last.startsWith('<subagent-notification>')) return { text: 'Noted.' };
        if (last.startsWith('wait in the background') && request.turn === 0) {
          return { tool_calls: [{ name: 'agent', arguments: { agent: 'scout', task: `WAIT TASK ${last}`, description: 'wait', run_in_background: true } }] };
        }
        return { text: 'Done.' };
      },
    });
  });
  afterAll(() => server?.close());
  const model = () => ['--model', 'openai-compatible:scripted', '--base-url', server.baseURL];

  /** `cadre run` of a background run that waits 3 s; resolves once it started. */
  async function startWaiting(database: string) {
    const owner = workspace.start(['run', ...model(), '--db', database, `wait in the background ${database}`]);
    const [, runId] = await owner.waitForStderr(/\[(run_\w+) scout\] started/);
    return { owner, runId };
  }

  it.runIf(canMountTmpfs())(
    'a full disk: one message saying what happened and what to do, exit 1 within seconds; after space is freed the session goes on and the run finishes',
    async () => {
      const mount = mkdtempSync(join(tmpdir(), 'cadre-full-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', mount]);
      try {
        const database = join(mount, 'cadre.db');
        const { owner, runId } = await startWaiting(database);
        // The run is committed (another process sees it) before the disk fills: that part must survive.
        for (let tries = 0; ; tries++) {
          const shown = await workspace.run(['show', runId, '--json', '--db', database]);
          if (shown.code === 0) break;
          expect(tries).toBeLessThan(20);
        }
        // Every byte left goes to a filler file; the next commit (a lease renewal at the latest) fails.
        spawnSync('dd', ['if=/dev/zero', `of=${join(mount, 'filler')}`, 'bs=64k']);
        const filledAt = Date.now();
        const result = await owner.exited;
        const exitMs = Date.now() - filledAt;
        expect(result.code).toBe(1);
        expect(exitMs).toBeLessThan(8_000);
        const sessionId = /--session (ses_\w+)/.exec(result.stderr)?.[1];
        expect(withoutRunLines(result.stderr)).toBe(
          `cadre: The disk holding the database ${database} is full (database or disk is full): cadre stopped the work of its runs, since nothing more could be stored; what was stored before is kept. Free some space, then continue the session: its unfinished runs are recovered.\n` +
            `  continue: cadre run --session ${sessionId} --db ${database} "..."\n`,
        );
        rmSync(join(mount, 'filler'));
        // What was committed before the disk filled is there, the run still running for its dead owner;
        // it goes on once space is free.
        const before = await workspace.run(['show', runId, '--json', '--db', database]);
        expect(JSON.parse(before.stdout).run.status).toBe('running');
        const resumed = await workspace.run(['run', ...model(), '--db', database, '--session', sessionId!, 'check']);
        expect(resumed.code, resumed.stderr).toBe(0);
        const after = await workspace.run(['show', runId, '--json', '--db', database]);
        expect(JSON.parse(after.stdout).run).toMatchObject({ status: 'completed', result: { text: 'Waited.' } });
        console.log(`disk full: exit ${result.code} ${exitMs} ms after the disk filled`);
      } finally {
        execFileSync('umount', ['-l', mount]);
        rmSync(mount, { recursive: true, force: true });
      }
    },
  );

  it.each([
    [
      '.cadre deleted',
      (database: string) => rmSync(dirname(database), { recursive: true, force: true }),
      'was deleted while cadre was using it: cadre stopped, since nothing more it wrote would be kept. The session and its runs went with the file.',
    ],
    [
      'the database replaced',
      async (database: string) => {
        await copyFile(workspace.database, `${database}.other`);
        await rename(`${database}.other`, database);
      },
      'was replaced by another file while cadre was using it: cadre stopped, since nothing more it wrote would be kept. The session and its runs are not in the file now at that path.',
    ],
  ])('%s while cadre run works: a clear error, exit 1 within seconds, no hint to continue a session that is gone', async (_name, fault, message) => {
    const database = join(workspace.cwd, `state-${_name.length}`, 'cadre.db');
    const { owner } = await startWaiting(database);
    await fault(database);
    const faultedAt = Date.now();
    const result = await owner.exited;
    const exitMs = Date.now() - faultedAt;
    console.log(`${_name}: exit ${result.code} ${exitMs} ms after the fault`);
    expect(exitMs).toBeLessThan(8_000);
    expect(result.code).toBe(1);
    expect(withoutRunLines(result.stderr)).toBe(`cadre: The database ${database} ${message}\n`);
  });
});

describe('cadre export -o never writes over the database it reads', () => {
  it('refuses the database and its -wal as the output, exit 2, and leaves them as they were', async () => {
    const before = await readFile(workspace.database);
    for (const output of [workspace.database, '.cadre/test.db-wal', './src/../.cadre/test.db']) {
      const result = await workspace.run(['export', sessionId, '--db', workspace.database, '-o', output]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(`cadre: -o ${output} is the database itself (or one of its files); write the export to another file.\n`);
    }
    expect((await readFile(workspace.database)).equals(before)).toBe(true);
  });
});

describe('cadre serve on a database that fails', () => {
  it('ends with the message and exit 1 when its database is deleted and the next write meets it', async () => {
    const database = join(workspace.cwd, 'served', 'cadre.db');
    const serve = workspace.start(['serve', '--json', '--port', '0', ...workspace.modelFlags.slice(0, 4), '--db', database]);
    const ready = await new Promise<{ url: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve never got ready: ${serve.output.stderr}`)), 20_000);
      serve.child.stdout!.on('data', () => {
        const line = serve.output.stdout.split('\n').find((text) => text.startsWith('{'));
        if (line) {
          clearTimeout(timer);
          resolve(JSON.parse(line) as { url: string });
        }
      });
    });
    await rm(dirname(database), { recursive: true, force: true });
    const response = await fetch(new URL('/api/sessions', ready.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'echo this' }),
    });
    expect(response.status).toBe(201);
    const result = await serve.exited;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `cadre: The database ${database} was deleted while cadre was using it: cadre stopped, since nothing more it wrote would be kept.`,
    );
    expect(result.stderr.match(/was deleted while cadre was using it/g)).toHaveLength(1);
  });
});
