import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { eventFixture, runFixture, sessionFixture } from '../../src/store/store-fixtures.ts';
import type { Store } from '../../src/store/store.ts';
import { dropSchemas, freshSchema, postgresReason, postgresUrl, schemaUrl } from './service-urls.ts';

const schemas: string[] = [];
afterAll(() => dropSchemas(schemas));

const storeSource = resolve(import.meta.dirname, '..', '..', 'src', 'store', 'postgres', 'postgres-store.ts');
const fixturesSource = resolve(import.meta.dirname, '..', '..', 'src', 'store', 'store-fixtures.ts');
const runIds = Array.from({ length: 20 }, (_, index) => `run_${String(index).padStart(2, '0')}`);

/**
 * What each process does in one event-loop turn, once told to go (plain JavaScript, run by both
 * processes): move every run from queued to running (its read-first patch counts the turn: a lock
 * read, then the change, both shared by the batch), append three events to each run and five
 * messages to the session. Resolves with the runs this process moved.
 */
const raceSource = `
  const moves = runIds.map((id) =>
    store.transitionRun({ id, from: ['queued'], to: 'running', patch: { lease_owner: owner }, patchFor: (current) => ({ turns: current.turns + 1 }), event: eventFixture(id, 'run-start', { owner }) }),
  );
  const appends = runIds.map((id) => store.appendRunEvents([1, 2, 3].map((index) => eventFixture(id, 'activity', { text: owner + ' ' + index }))));
  const messages = store.appendMessages([1, 2, 3, 4, 5].map((index) => ({ session_id: 'ses_1', role: 'user', content: owner + ' ' + index, created_at: '2025-01-01T00:00:09.000Z' })));
  return Promise.all([Promise.all(moves), Promise.all(appends), messages]).then(([runs]) => runs.flatMap((run) => (run ? [run.id] : [])));
`;

const race = new Function('store', 'owner', 'runIds', 'eventFixture', raceSource) as (
  store: Store,
  owner: string,
  ids: string[],
  fixture: typeof eventFixture,
) => Promise<string[]>;

/** The other process: the same race on the same schema, started by a line on stdin; prints the runs it won. */
function otherProcess(url: string) {
  const program = `
    import { openPostgresStore } from ${JSON.stringify(storeSource)};
    import { eventFixture } from ${JSON.stringify(fixturesSource)};
    const store = await openPostgresStore({ connectionString: ${JSON.stringify(url)} });
    const runIds = ${JSON.stringify(runIds)};
    const race = new Function('store', 'owner', 'runIds', 'eventFixture', ${JSON.stringify(raceSource)});
    console.log('ready');
    await new Promise((go) => process.stdin.once('data', go));
    const won = await race(store, 'other', runIds, eventFixture);
    await store.flush();
    console.log(JSON.stringify(won));
    await store.close();
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const ready = new Promise<void>((done, fail) => {
    const check = () => (stdout.includes('ready') ? done() : undefined);
    child.stdout!.on('data', check);
    child.on('close', () => fail(new Error(`The other process ended before it was ready: ${stderr}`)));
  });
  const won = new Promise<string[]>((done, fail) =>
    child.on('close', (code) =>
      code === 0 ? done(JSON.parse(stdout.trim().split('\n').at(-1)!) as string[]) : fail(new Error(`The other process failed (${code}): ${stderr}`)),
    ),
  );
  return { ready, go: () => child.stdin!.end('go\n'), won };
}

/**
 * What each process does to append to runs it knows (it appended to each once already, so its
 * later appends are held and a run's events of a commit share a row): `turns` event-loop turns,
 * each appending `perTurn` events to every run, then waiting for a timer so the next turn's
 * commit is separate. Plain JavaScript, run by both processes.
 */
const appendSource = `
  return (async () => {
    await Promise.all(runIds.map((id) => store.appendRunEvents([eventFixture(id, 'activity', { text: owner + ' 0' })])));
    await store.flush();
    go();
    await started;
    for (let turn = 0; turn < turns; turn++) {
      for (const id of runIds) {
        const events = [];
        for (let index = 0; index < perTurn; index++) events.push(eventFixture(id, 'activity', { text: owner + ' ' + (turn * perTurn + index + 1) }));
        await store.appendRunEvents(events);
      }
      await new Promise((resolve) => setTimeout(resolve, turn % 3));
    }
    await store.flush();
  })();
`;

const appendTurns = new Function('store', 'owner', 'runIds', 'eventFixture', 'turns', 'perTurn', 'go', 'started', appendSource) as (
  store: Store,
  owner: string,
  ids: string[],
  fixture: typeof eventFixture,
  turns: number,
  perTurn: number,
  go: () => void,
  started: Promise<unknown>,
) => Promise<void>;

/** Runs `body` (JavaScript, with `store` open on `url`) in another process, to its end. */
async function inOtherProcess(url: string, body: string): Promise<void> {
  const program = `
    import { openPostgresStore } from ${JSON.stringify(storeSource)};
    const store = await openPostgresStore({ connectionString: ${JSON.stringify(url)} });
    ${body}
    await store.flush();
    await store.close();
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((done) => child.on('close', done));
  expect(code, stderr).toBe(0);
}

describe.skipIf(!postgresUrl)(`postgres store between two processes${postgresReason}`, () => {
  it("decides a run's end on the run as another process left it, not as this one last wrote it", async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const store = await openPostgresStore({ connectionString: schemaUrl(schema) });
    await store.insertRun(runFixture({ id: 'run_1', status: 'queued', mode: 'foreground' }), eventFixture('run_1', 'run-queued'));
    await store.transitionRun({ id: 'run_1', from: ['queued'], to: 'running', event: eventFixture('run_1', 'run-start') });
    await store.patchRun('run_1', { turns: 3 });
    // This process knows the run (it wrote all of it); another one now makes it background.
    await inOtherProcess(schemaUrl(schema), "await store.updateRun('run_1', { mode: 'background', promoted_at: '2025-01-01T00:00:05.000Z' });");
    const seen: string[] = [];
    const ended = await store.transitionRun({
      id: 'run_1',
      from: ['running'],
      to: 'completed',
      patchFor: (current) => {
        seen.push(current.mode);
        return current.mode === 'background' ? { notification: { delivered_at: null, suppressed: false } } : {};
      },
      event: eventFixture('run_1', 'run-end'),
    });
    expect([ended?.status, ended?.mode, ended?.turns, ended?.notification]).toEqual(['completed', 'background', 3, { delivered_at: null, suppressed: false }]);
    expect(seen.at(-1)).toBe('background');
    await store.close();
  }, 30_000);

  it('lets exactly one of two processes move each run when both change twenty at once in shared statements, and keeps every seq once, in order', async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const store = await openPostgresStore({ connectionString: schemaUrl(schema) });
    await store.createSession(sessionFixture({ id: 'ses_1' }));
    await Promise.all(runIds.map((id) => store.insertRun(runFixture({ id, status: 'queued', turns: 0 }), eventFixture(id, 'run-queued'))));
    await store.flush();
    const other = otherProcess(schemaUrl(schema));
    await other.ready;
    other.go();
    const mine = await race(store, 'this', runIds, eventFixture);
    await store.flush();
    const theirs = await other.won;
    expect([...mine, ...theirs].sort()).toEqual(runIds);
    // Read after the other process committed: what it wrote is there (nothing is served from memory).
    for (const id of runIds) {
      const run = (await store.getRun(id))!;
      expect([run.status, run.turns, run.lease_owner]).toEqual(['running', 1, mine.includes(id) ? 'this' : 'other']);
      const events = await store.listRunEvents(id);
      expect(events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(events.filter((event) => event.type === 'run-start')).toHaveLength(1);
      for (const owner of ['this', 'other']) {
        expect(events.filter((event) => event.type === 'activity' && String(event.data.text).startsWith(owner)).map((event) => event.data.text)).toEqual(
          [1, 2, 3].map((index) => `${owner} ${index}`),
        );
      }
    }
    const messages = await store.listMessages('ses_1');
    expect(messages.map((message) => message.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const owner of ['this', 'other']) {
      expect(messages.filter((message) => String(message.content).startsWith(owner)).map((message) => message.content)).toEqual(
        [1, 2, 3, 4, 5].map((index) => `${owner} ${index}`),
      );
    }
    await store.close();
  }, 30_000);

  it("keeps every event once and in order when two processes append many events to the same runs at once, each commit packing a run's events into one row", async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const store = await openPostgresStore({ connectionString: schemaUrl(schema) });
    const ids = runIds.slice(0, 5);
    await Promise.all(ids.map((id) => store.insertRun(runFixture({ id, status: 'running' }), eventFixture(id, 'run-start'))));
    await store.flush();
    const turns = 12;
    const perTurn = 4;
    const program = `
      import { openPostgresStore } from ${JSON.stringify(storeSource)};
      import { eventFixture } from ${JSON.stringify(fixturesSource)};
      const store = await openPostgresStore({ connectionString: ${JSON.stringify(schemaUrl(schema))} });
      const started = new Promise((resolve) => process.stdin.once('data', resolve));
      const appendTurns = new Function('store', 'owner', 'runIds', 'eventFixture', 'turns', 'perTurn', 'go', 'started', ${JSON.stringify(appendSource)});
      await appendTurns(store, 'other', ${JSON.stringify(ids)}, eventFixture, ${turns}, ${perTurn}, () => console.log('ready'), started);
      await store.close();
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const otherReady = new Promise<void>((ready) => child.stdout!.on('data', (chunk: Buffer) => String(chunk).includes('ready') && ready()));
    const otherDone = new Promise<number | null>((done) => child.on('close', done));
    let start!: () => void;
    const started = new Promise<void>((resolve) => (start = resolve));
    const mine = appendTurns(store, 'this', ids, eventFixture, turns, perTurn, () => {}, started);
    await otherReady;
    child.stdin!.end('go\n');
    start();
    await mine;
    expect(await otherDone, stderr).toBe(0);
    // run-start, then each process's first event and its held ones.
    const total = 3 + 2 * turns * perTurn;
    for (const id of ids) {
      const events = await store.listRunEvents(id);
      expect(events.map((event) => event.seq)).toEqual(Array.from({ length: total }, (_, index) => index + 1));
      for (const owner of ['this', 'other']) {
        const texts = events.filter((event) => String(event.data.text).startsWith(owner)).map((event) => event.data.text);
        expect(texts).toEqual(Array.from({ length: turns * perTurn + 1 }, (_, index) => `${owner} ${index}`));
      }
      // Read from any event on: the row holding the next one is found, whatever row it is in.
      for (const afterSeq of [0, 1, 2, 3, 17, total - 1, total]) {
        expect((await store.listRunEvents(id, { afterSeq })).map((event) => event.seq)).toEqual(events.slice(afterSeq).map((event) => event.seq));
        expect((await store.listRunEvents(id, { afterSeq, limit: 3 })).map((event) => event.seq)).toEqual(
          events.slice(afterSeq, afterSeq + 3).map((event) => event.seq),
        );
      }
    }
    // The events were packed (rows of several), and no two rows of a run share a seq.
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    const { rows } = await client.query<{ run_id: string; seq: number; last_seq: number | null }>(
      `SELECT run_id, seq, last_seq FROM ${schema}.run_event_rows ORDER BY run_id, seq`,
    );
    await client.end();
    expect(rows.filter((row) => row.last_seq !== null).length).toBeGreaterThan(ids.length);
    for (const id of ids) {
      const covered = rows
        .filter((row) => row.run_id === id)
        .flatMap((row) => Array.from({ length: (row.last_seq ?? row.seq) - row.seq + 1 }, (_, index) => row.seq + index));
      expect(covered).toEqual(Array.from({ length: total }, (_, index) => index + 1));
    }
    await store.close();
  }, 60_000);
});
