import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { Cadre } from '../runtime/create-cadre.ts';
import { createDashboardApp } from './create-server.ts';
import { createTestCadre, streamFirstWords } from './server-fixtures.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** Counts live subscriptions, to see the stream let go of its own. */
function countingCadre() {
  const cadre = createTestCadre({ streamDelayMs: 3 });
  open.push(cadre);
  let subscriptions = 0;
  const counted: Cadre = {
    ...cadre,
    subscribe(listener) {
      subscriptions++;
      const unsubscribe = cadre.subscribe(listener);
      return () => {
        subscriptions--;
        unsubscribe();
      };
    },
  };
  return { cadre: counted, subscriptions: () => subscriptions };
}

/** Reads the stream until `done` says the text so far is enough. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, done: (text: string) => boolean): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  while (!done(text)) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  return text;
}

describe('GET /api/events', () => {
  it("streams a session's run events as server-sent events and unsubscribes on disconnect", async () => {
    const { cadre, subscriptions } = countingCadre();
    const app = createDashboardApp({ cadre });
    const session = await cadre.createSession();
    const response = await app.request(`/api/events?session=${session.id}`);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.getReader();
    await readUntil(reader, (text) => text.includes(': connected'));
    expect(subscriptions()).toBe(1);

    await cadre.send(session.id, 'Find the answer');
    const text = await readUntil(reader, (received) => received.includes('"type":"run-end"'));
    const first = text.split('\n\n').find((block) => block.startsWith('event: run-event'))!;
    const event = JSON.parse(
      first
        .split('\n')
        .find((line) => line.startsWith('data: '))!
        .slice(6),
    );
    expect(event).toMatchObject({ type: 'run-event', run: { parent_session_id: session.id, agent: 'general' }, event: { type: 'run-queued' } });
    expect(text).toContain('event: message');
    expect(text).toContain('event: session-status');

    await reader.cancel();
    await cadre.waitForIdle(session.id);
    expect(subscriptions()).toBe(0);
  });

  it('leaves out the events of other sessions', async () => {
    const { cadre } = countingCadre();
    const app = createDashboardApp({ cadre });
    const watched = await cadre.createSession();
    const other = await cadre.createSession();
    const reader = (await app.request(`/api/events?session=${watched.id}`)).body!.getReader();
    await readUntil(reader, (text) => text.includes(': connected'));
    await cadre.send(other.id, 'Find the answer');
    await cadre.waitForIdle(other.id);
    await cadre.send(watched.id, 'Find the answer');
    const text = await readUntil(reader, (received) => received.includes('"type":"run-end"'));
    expect(text).not.toContain(other.id);
    await reader.cancel();
    await cadre.waitForIdle(watched.id);
  });

  it("passes what the session's subagents say: their streamed text and their messages", async () => {
    const { cadre } = countingCadre();
    const app = createDashboardApp({ cadre });
    const session = await cadre.createSession();
    const reader = (await app.request(`/api/events?session=${session.id}`)).body!.getReader();
    await readUntil(reader, (text) => text.includes(': connected'));
    await cadre.send(session.id, 'STREAM the long answer.');
    const text = await readUntil(reader, (received) => received.includes('"type":"run-end"'));
    await reader.cancel();
    const events = text
      .split('\n\n')
      .filter((block) => block.startsWith('event: '))
      .map((block) =>
        JSON.parse(
          block
            .split('\n')
            .find((line) => line.startsWith('data: '))!
            .slice(6),
        ),
      );
    const run = events.find((event) => event.type === 'run-event').run;
    const child = run.child_session_id;
    const childText = events
      .filter((event) => event.type === 'text-delta' && event.session_id === child)
      .map((event) => event.text)
      .join('');
    expect(childText).toContain(`${streamFirstWords}The build is green.`);
    expect(events.filter((event) => event.type === 'message' && event.message.session_id === child).map((event) => event.message.role)).toEqual([
      'assistant',
      'tool',
      'assistant',
    ]);
    await cadre.waitForIdle(session.id);
  });

  it('tells a view of a session when another process committed to the database, and stays quiet while nothing did', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'cadre-event-stream-'));
    folders.push(folder);
    const path = join(folder, 'cadre.db');
    const cadre = createTestCadre({ store: createSqliteStore({ path }) });
    open.push(cadre);
    const app = createDashboardApp({ cadre });
    const session = await cadre.createSession();
    await cadre.store.flush();
    const reader = (await app.request(`/api/events?session=${session.id}`)).body!.getReader();
    // The stream opens with the session's state, then says nothing until something changes.
    expect(await readUntil(reader, (text) => text.includes('event: session-state'))).toContain(`data: {"session_id":"${session.id}","state":{"kind":"idle"}}`);
    const pending = reader.read();
    expect(await Promise.race([pending.then(() => 'an event'), new Promise((resolve) => setTimeout(resolve, 600, 'quiet'))])).toBe('quiet');
    // Another connection to the file, as `cadre run` in another terminal holds.
    const other = createSqliteStore({ path });
    await other.appendMessages([{ session_id: session.id, role: 'user', content: 'from another terminal', created_at: new Date().toISOString() }]);
    await other.close();
    const first = new TextDecoder().decode((await pending).value);
    expect(first + (await readUntil(reader, (text) => (first + text).includes('store-changed')))).toContain('event: store-changed\ndata: {}');
    await reader.cancel();
  });

  it("sends a session's state when the stream opens and each time it changes, the same value as the API's", async () => {
    const cadre = createTestCadre({ slowDelayMs: 30_000 });
    open.push(cadre);
    const app = createDashboardApp({ cadre });
    const session = await cadre.createSession();
    const reader = (await app.request(`/api/events?session=${session.id}`)).body!.getReader();
    const states = (text: string) => [...text.matchAll(/event: session-state\ndata: (.*)\n/g)].map((match) => JSON.parse(match[1]).state);
    let text = await readUntil(reader, (so) => states(so).length === 1);
    await cadre.send(session.id, 'Start the SLOW survey.');
    text += await readUntil(reader, (so) => states(text + so).some((state) => state.kind === 'waiting_on_runs'));
    // Idle, perhaps running while the turn lasted, then waiting: each change once.
    expect(states(text)[0]).toEqual({ kind: 'idle' });
    expect(states(text).at(-1)).toEqual({ kind: 'waiting_on_runs', runs: 1 });
    expect(states(text).length).toBeLessThanOrEqual(3);
    const shown = (await (await app.request(`/api/sessions/${session.id}`)).json()) as { session: { state: unknown } };
    expect(shown.session.state).toEqual({ kind: 'waiting_on_runs', runs: 1 });
    // A person's stop reads canceled (until the next turn), not idle.
    await cadre.stopSession(session.id);
    text += await readUntil(reader, (so) => states(text + so).at(-1)?.kind === 'canceled');
    expect(states(text).at(-1)).toEqual({ kind: 'canceled' });
    await reader.cancel();
  });

  it('tells a sessions list when sessions change, and sends it nothing else without ?session=', async () => {
    const cadre = createTestCadre();
    open.push(cadre);
    const app = createDashboardApp({ cadre });
    const reader = (await app.request('/api/events?list=1')).body!.getReader();
    await readUntil(reader, (text) => text.includes(': connected'));
    const session = await cadre.createSession();
    await cadre.send(session.id, 'Find the answer.');
    const text = await readUntil(reader, (so) => so.includes('event: sessions-changed'));
    expect(text).toContain('event: sessions-changed\ndata: {}');
    expect(text).not.toContain('event: run-event');
    expect(text).not.toContain('event: message');
    await cadre.waitForIdle(session.id);
    await reader.cancel();
  });

  it('sends a heartbeat comment while nothing happens', async () => {
    const { cadre } = countingCadre();
    const app = createDashboardApp({ cadre, heartbeatMs: 20 });
    const reader = (await app.request('/api/events')).body!.getReader();
    expect(await readUntil(reader, (text) => text.includes(': heartbeat'))).toContain(': heartbeat\n\n');
    await reader.cancel();
  });
});
