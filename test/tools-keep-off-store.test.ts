import { readFileSync, statSync } from 'node:fs';
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEventRecord, RunRecord } from '../src/store/records.ts';
import { parseScript, startScriptedServer, type ScriptedServer } from '../src/testing/index.ts';
import { createWorkspace, type CadreProcess, type Workspace } from './helpers/cadre-cli.ts';
import { eventually } from './helpers/eventually.ts';

/**
 * Issue 19, point 1: a tool that opens a file of the store in the process that holds it drops
 * every POSIX lock SQLite holds there (closing any descriptor of a file does), and from then on
 * other processes delete the WAL under it and never see its writes. For every built-in tool, with
 * arguments that reach the database, a background run calls it in one process while others watch.
 */
const refused = /is one of cadre's own database files; no tool may open it/;
const probes: Array<{ name: string; tool: string; arguments: Record<string, unknown>; result: RegExp; not?: string }> = [
  {
    name: 'grep of the whole workspace',
    tool: 'grep',
    arguments: { pattern: 'needle|SQLite' },
    result: /^src\/needle\.txt:1: a needle in the workspace$/,
    not: '{db}',
  },
  { name: 'grep of .cadre', tool: 'grep', arguments: { pattern: 'needle|SQLite', path: '.cadre' }, result: /^\(no matches for/ },
  { name: 'list_files of .cadre', tool: 'list_files', arguments: { path: '.cadre' }, result: /^\.cadre\/agents\/prober\.md$/m, not: '{db}' },
  { name: 'read_file of the database', tool: 'read_file', arguments: { path: '.cadre/{db}' }, result: refused },
  { name: 'read_file of the WAL through a symbolic link', tool: 'read_file', arguments: { path: '{db}-wal-link' }, result: refused },
  { name: 'read_file of the -shm by way of .. and another case', tool: 'read_file', arguments: { path: 'src/../.cadre/./{DB}-SHM' }, result: refused },
  { name: 'write_file of the -journal', tool: 'write_file', arguments: { path: '.cadre/{db}-journal', content: 'x' }, result: refused },
  { name: 'edit_file of the database', tool: 'edit_file', arguments: { path: '.cadre/{db}', old_string: 'SQLite', new_string: 'sqlite' }, result: refused },
  { name: 'bash reading the database', tool: 'bash', arguments: { command: 'cat .cadre/{db} > /dev/null; echo read' }, result: /^read\n/ },
];

/** Each probe has a database of its own, so one that breaks its database breaks no other. */
const databaseName = (index: number) => `probe-${index}.db`;

function withDatabase(value: Record<string, unknown>, index: number): Record<string, unknown> {
  const text = JSON.stringify(value).replaceAll('{db}', databaseName(index)).replaceAll('{DB}', databaseName(index).toUpperCase());
  return JSON.parse(text) as Record<string, unknown>;
}

const prober = `---
description: Probes the workspace with every tool.
tools: [read_file, list_files, grep, write_file, edit_file, bash]
mode: subagent
---
You are the prober.
`;

function script() {
  return parseScript([
    ...probes.map((probe, index) => ({
      when: { system_includes: 'You are the prober', user_includes: `PROBE ${index};` },
      turns: [
        { tool_calls: [{ name: probe.tool, arguments: withDatabase(probe.arguments, index) }] },
        { tool_calls: [{ name: 'bash', arguments: { command: 'echo asked' } }] },
        { delay_ms: 30_000, text: 'Too late.' },
      ],
    })),
    { when: { last_user_includes: '<subagent-notification>' }, turns: [{ text: 'Noted.' }] },
    ...probes.map((_, index) => ({
      when: { user_includes: `probe number ${index};` },
      turns: [
        { tool_calls: [{ name: 'agent', arguments: { agent: 'prober', task: `PROBE ${index};`, description: `probe ${index}`, run_in_background: true } }] },
        { text: 'Started the probe.' },
      ],
    })),
  ]);
}

let workspace: Workspace;
let server: ScriptedServer;
beforeAll(async () => {
  workspace = await createWorkspace();
  server = await startScriptedServer({ script: script() });
  await writeFile(join(workspace.cwd, '.cadre', 'agents', 'prober.md'), prober);
  await writeFile(join(workspace.cwd, 'src', 'needle.txt'), 'a needle in the workspace\n');
  for (const index of probes.keys()) await symlink(join('.cadre', `${databaseName(index)}-wal`), join(workspace.cwd, `${databaseName(index)}-wal-link`));
});
afterAll(async () => {
  await server?.close();
  await workspace?.close();
});

type Line = { type: string; [key: string]: unknown };

/** Resolves with the first JSON line of the owner's stdout (from `from` on) that matches. */
async function nextLine(owner: CadreProcess, seen: { count: number }, matches: (line: Line) => boolean, timeoutMs = 15_000): Promise<Line> {
  return eventually(
    () => {
      const lines = owner.output.stdout.split('\n').filter((text) => text.startsWith('{'));
      while (seen.count < lines.length) {
        const line = JSON.parse(lines[seen.count++]) as Line;
        if (matches(line)) return line;
      }
      if (owner.child.exitCode !== null) throw new Error(`the owner exited:\n${owner.output.stdout}\n${owner.output.stderr}`);
      return undefined;
    },
    { timeout: timeoutMs, interval: 20, what: 'a matching line from the owner' },
  );
}

/**
 * POSIX locks the process holds on the database and on its -shm. SQLite keeps a shared lock on
 * each for as long as it has the database open (more while it writes); a process that lost them
 * looks to others as if it had closed the database.
 */
function locksHeld(pid: number, database: string): { database: number; shm: number } {
  const inode = (path: string) => String(statSync(path, { throwIfNoEntry: false })?.ino ?? -1);
  const [databaseInode, shmInode] = [inode(database), inode(`${database}-shm`)];
  const held = readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[4] === String(pid))
    .map((fields) => fields[5]?.split(':')[2]);
  return { database: held.filter((found) => found === databaseInode).length, shm: held.filter((found) => found === shmInode).length };
}

function walInode(database: string): number | null {
  return statSync(`${database}-wal`, { throwIfNoEntry: false })?.ino ?? null;
}

interface Measured {
  probe: string;
  askVisibleMs: number[];
  progressVisibleMs: number;
  stopMs: number;
  stopLandedMs: number;
  locks: Array<{ database: number; shm: number }>;
}
const measured: Measured[] = [];
afterAll(() => {
  if (measured.length > 0) console.log(JSON.stringify(measured));
});

/** `cadre ARGS --json`, parsed. */
async function json<T>(args: readonly string[]): Promise<T> {
  const result = await workspace.run([...args, '--json']);
  if (result.code !== 0) throw new Error(`cadre ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

const modelFlags = () => ['--model', 'openai-compatible:scripted', '--base-url', server.baseURL];

describe.runIf(process.platform === 'linux')('no tool opens a file of the store in the process that holds it', () => {
  it.each(probes.map((probe, index) => [probe.name, index] as const))(
    'after %s, another process sees the run at once, answers its asks and stops it within 2 s; the owner keeps its locks and its WAL',
    async (name, index) => {
      const database = join(workspace.cwd, '.cadre', databaseName(index));
      const db = ['--db', database];
      const owner = workspace.start(['run', '--json', '--approvals', 'wait', ...modelFlags(), ...db, `probe number ${index};`]);
      const seen = { count: 0 };
      const result: Measured = { probe: name, askVisibleMs: [], progressVisibleMs: -1, stopMs: -1, stopLandedMs: -1, locks: [] };
      try {
        const started = await nextLine(owner, seen, (line) => line.type === 'run-event' && (line.event as RunEventRecord).type === 'run-start');
        const runId = (started.event as RunEventRecord).run_id;
        const wal = walInode(database);
        expect(wal).not.toBeNull();
        // Every ask the run makes (a write before the final bash on a build that lets it through) is answered from outside.
        for (;;) {
          const asked = await nextLine(owner, seen, (line) => line.type === 'approval' && (line.approval as { status: string }).status === 'pending');
          const approval = asked.approval as { id: string; tool: string; argument: string | null };
          const askedAt = Date.now();
          const listed = await json<Array<{ id: string }>>(['approvals', ...db]);
          result.askVisibleMs.push(Date.now() - askedAt);
          expect(listed.map((ask) => ask.id)).toContain(approval.id);
          result.locks.push(locksHeld(owner.child.pid!, database));
          expect(walInode(database)).toBe(wal);
          const approve = await workspace.run(['approve', approval.id, ...db]);
          expect(approve.code).toBe(0);
          if (approval.tool === 'bash' && approval.argument === 'echo asked') break;
        }
        // The run's next step waits on the slow model; what it did so far must be visible to a new process now.
        await nextLine(owner, seen, (line) => {
          const event = line.event as { type: string; data: { tool?: string } } | undefined;
          return line.type === 'run-event' && event?.type === 'tool-call-end' && event.data.tool === 'bash';
        });
        const progressAt = Date.now();
        const shown = await json<{ run: RunRecord; events: RunEventRecord[] }>(['show', runId, ...db]);
        result.progressVisibleMs = Date.now() - progressAt;
        expect(shown.run.status).toBe('running');
        expect(shown.events.filter((event) => event.type === 'tool-call-end').map((event) => (event.data as { tool: string }).tool)).toEqual([
          probes[index].tool,
          'bash',
        ]);
        result.locks.push(locksHeld(owner.child.pid!, database));
        expect(walInode(database)).toBe(wal);
        const stopAt = Date.now();
        const stop = await workspace.run(['stop', runId, ...db]);
        result.stopMs = Date.now() - stopAt;
        expect(stop.code).toBe(0);
        await nextLine(owner, seen, (line) => line.type === 'run-event' && (line.event as RunEventRecord).type === 'run-end');
        // From the stop request in the store to the run's end in its owner; the command's own start
        // (loading the runtime, slow on a loaded machine) comes on top.
        const stopped = (await json<{ run: RunRecord }>(['show', runId, ...db])).run;
        expect(stopped.status).toBe('canceled_by_user');
        result.stopLandedMs = Date.parse(stopped.ended_at!) - Date.parse(stopped.stop_requested_at!);
        expect(result.stopLandedMs).toBeLessThan(2_000);
        expect(result.stopMs).toBeLessThan(5_000);
        // (The owner deletes its WAL itself once it exits, as the last connection.)
        const toolResult = await nextLine(owner, { count: 0 }, (line) => {
          const content = (line.message as { role?: string; content?: unknown } | undefined)?.content;
          return (
            Array.isArray(content) &&
            content.some((part: { type: string; toolCallId?: string }) => part.type === 'tool-result' && part.toolCallId === 'call_1_0_0') &&
            (line.message as { session_id: string }).session_id !== (started.run as RunRecord).parent_session_id
          );
        });
        const output = (toolResult.message as { content: Array<{ output: { value: string } }> }).content[0].output.value;
        expect(output).toMatch(probes[index].result);
        // Other probes' databases are not this process's store: only its own are kept off.
        if (probes[index].not) expect(output).not.toContain(probes[index].not.replace('{db}', databaseName(index)));
        for (const locks of result.locks) expect(locks).toEqual({ database: expect.any(Number), shm: expect.any(Number) });
        expect(result.locks.every((locks) => locks.database >= 1 && locks.shm >= 1)).toBe(true);
        const exited = await owner.exited;
        expect(exited.code).toBe(0);
      } finally {
        measured.push(result);
        owner.child.kill('SIGKILL');
        await owner.exited;
      }
    },
  );
});
