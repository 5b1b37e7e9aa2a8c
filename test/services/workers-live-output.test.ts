import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAgents } from '../../src/agents/load-agents.ts';
import type { Coordination } from '../../src/coordination/coordination.ts';
import { createRedisCoordination } from '../../src/coordination/redis-coordination.ts';
import type { CadreEvent } from '../../src/runs/run-bus.ts';
import { createCadre, type Cadre } from '../../src/runtime/create-cadre.ts';
import type { RunRecord } from '../../src/store/records.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { createWorkspaceTools } from '../../src/tools/workspace-tools.ts';
import type { CadreProcess, Workspace } from '../helpers/cadre-cli.ts';
import { postgresUrl, redisReason, redisUrl } from './service-urls.ts';
import { until, workersWorkspace } from './workers-fixtures.ts';

/** What the scout of `stream please` streams (test/services/workers-script.yaml), 8 characters every 25 ms. */
const streamedText =
  "Streaming from a worker: the workspace holds notes.txt, which reminds someone to buy milk, and src/app.ts, which exports one constant named app. Nothing else is there; no tests, no configuration beyond cadre's own, and no build output. That is the whole survey, sent a few characters at a time.";

interface Seen {
  at: number;
  event: CadreEvent;
}

/** What views saw of the scout's run, in a form that does not depend on where it ran. */
function viewOf(seen: Seen[], run: RunRecord) {
  const child = run.child_session_id;
  const output = seen.filter(
    ({ event }) => (event.type === 'text-delta' && event.session_id === child) || (event.type === 'message' && event.message.session_id === child),
  );
  const end = seen.findIndex(({ event }) => event.type === 'run-event' && event.run.id === run.id && event.event.type === 'run-end');
  const deltas = output.filter(({ event }) => event.type === 'text-delta');
  return {
    text: deltas.map(({ event }) => (event.type === 'text-delta' ? event.text : '')).join(''),
    messages: output.flatMap(({ event }) => (event.type === 'message' ? [`${event.message.seq} ${event.message.role}`] : [])),
    /** Every piece of output came before the run's end. */
    outputBeforeEnd: end >= 0 && output.every((entry) => seen.indexOf(entry) < end),
    deltaCount: deltas.length,
    /** From the first streamed text to the run's end, as the views saw it. */
    streamingMs: end >= 0 && deltas.length > 0 ? seen[end].at - deltas[0].at : 0,
    /** The processes that held the run's lease, by pid, as its live events said. */
    pids: new Set(
      seen.flatMap(({ event }) =>
        event.type === 'run-event' && event.run.id === run.id && event.run.lease_owner !== null ? [Number(event.run.lease_owner.split(':')[1])] : [],
      ),
    ),
  };
}

describe.skipIf(!redisUrl || !postgresUrl)(`live views of runs on cadre worker processes${redisReason}`, () => {
  let workspace: Workspace;
  let queue: string;
  let store: Store;
  let coordination: Coordination;
  /** Counts what workers publish on output channels (`<prefix>:output:*`). */
  let outputMessages = 0;
  let probe: Redis;

  const hostOptions = async () => ({
    store,
    workspace: workspace.cwd,
    model: 'openai-compatible:scripted',
    baseURL: workspace.server.baseURL,
    env: {},
    agents: await loadAgents({ cwd: workspace.cwd, home: workspace.cwd, env: {} }),
    tools: createWorkspaceTools({ root: workspace.cwd }),
    approvals: 'yes' as const,
  });

  /** A turn of `stream please` on the host; `watch` subscribes to its events for the whole turn. */
  async function streamTurn(host: Cadre, watch: boolean): Promise<{ seen: Seen[]; run: RunRecord }> {
    const seen: Seen[] = [];
    const off = watch ? host.subscribe((event) => seen.push({ at: Date.now(), event })) : () => {};
    try {
      const session = await host.createSession();
      const turn = await host.send(session.id, 'stream please');
      await host.waitForIdle(session.id);
      expect(turn.text).toBe('The scout streamed its survey.');
      const [run] = await store.listRuns({ parent_session_id: session.id });
      expect(run).toMatchObject({ status: 'completed', result: { text: streamedText } });
      return { seen, run };
    } finally {
      off();
    }
  }

  beforeAll(async () => {
    workspace = await workersWorkspace();
    queue = workspace.env.CADRE_QUEUE!;
    store = await openStore(workspace.database);
    coordination = createRedisCoordination({ url: queue, store });
    const prefix = new URL(queue).searchParams.get('prefix');
    probe = new Redis(redisUrl!);
    await probe.psubscribe(`${prefix}:output:*`);
    probe.on('pmessage', () => outputMessages++);
  }, 90_000);

  afterAll(async () => {
    probe?.disconnect();
    await coordination?.close();
    await store?.close();
    await workspace?.close();
  });

  it("shows a run on a worker to the library's subscribers as a local run: its streamed text and messages, as they happen, before its end", async () => {
    const local = createCadre(await hostOptions());
    const remote = createCadre({ ...(await hostOptions()), coordination, queue });
    try {
      const here = await streamTurn(local, true);
      const requestsBefore = workspace.server.requests.length;
      const there = await streamTurn(remote, true);
      // It ran on a worker, which streamed it (someone watched the host).
      const workerPids = workspace.workers.map((worker) => worker.child.pid);
      expect(workerPids.filter((pid) => viewOf(there.seen, there.run).pids.has(pid!))).toHaveLength(1);
      expect([...viewOf(here.seen, here.run).pids]).toEqual([process.pid]);
      const scoutCalls = workspace.server.requests.slice(requestsBefore).filter((request) => request.system.includes('You are the scout'));
      expect(scoutCalls.map((request) => request.stream)).toEqual([true, true]);

      const localView = viewOf(here.seen, here.run);
      const remoteView = viewOf(there.seen, there.run);
      expect(remoteView.text).toBe(streamedText);
      expect(remoteView.messages).toEqual(localView.messages);
      expect(remoteView.messages.length).toBeGreaterThanOrEqual(3);
      expect(remoteView.outputBeforeEnd).toBe(true);
      expect(localView).toMatchObject({ text: streamedText, outputBeforeEnd: true });
      // As it happened: the text came in pieces over the ~0.9 s the model streamed it, not at the end.
      expect(remoteView.deltaCount).toBeGreaterThanOrEqual(5);
      expect(remoteView.streamingMs).toBeGreaterThan(400);
      console.log(
        `live output of a run on a worker: ${remoteView.deltaCount} text pieces over ${remoteView.streamingMs} ms (local run: ${localView.deltaCount} over ${localView.streamingMs} ms), ${remoteView.messages.length} messages`,
      );
    } finally {
      await local.close();
      await remote.close();
    }
  }, 60_000);

  it('relays nothing of a run while nobody watches the host, and its worker does not stream it; batches output once someone does', async () => {
    const host = createCadre({ ...(await hostOptions()), coordination, queue });
    try {
      const requestsBefore = workspace.server.requests.length;
      outputMessages = 0;
      await streamTurn(host, false);
      await new Promise((done) => setTimeout(done, 300));
      expect(outputMessages).toBe(0);
      const scoutCalls = workspace.server.requests.slice(requestsBefore).filter((request) => request.system.includes('You are the scout'));
      expect(scoutCalls.map((request) => request.stream)).toEqual([false, false]);

      outputMessages = 0;
      const { seen, run } = await streamTurn(host, true);
      const view = viewOf(seen, run);
      expect(view.text).toBe(streamedText);
      // The model sent 37 deltas over ~0.9 s; the worker sent them in batches of at most one per 50 ms (with the messages).
      const modelDeltas = Math.ceil(streamedText.length / 8);
      expect(outputMessages).toBeGreaterThan(0);
      expect(outputMessages).toBeLessThan(modelDeltas);
      console.log(`output relayed while watched: ${modelDeltas} model deltas and ${view.messages.length} messages in ${outputMessages} Redis messages`);
    } finally {
      await host.close();
    }
  }, 60_000);

  it('streams a run on a worker to `cadre run --json` in another process, text pieces before the run ends', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, '--json', 'stream please']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as CadreEvent & { type: string });
    const end = lines.findIndex((line) => line.type === 'run-event' && line.event.type === 'run-end');
    expect(end).toBeGreaterThan(0);
    const run = (lines[end] as Extract<CadreEvent, { type: 'run-event' }>).run;
    const deltas = lines.filter(
      (line): line is Extract<CadreEvent, { type: 'text-delta' }> => line.type === 'text-delta' && line.session_id === run.child_session_id,
    );
    expect(deltas.map((line) => line.text).join('')).toBe(streamedText);
    expect(deltas.length).toBeGreaterThan(1);
    expect(lines.slice(end).some((line) => line.type === 'text-delta' && line.session_id === run.child_session_id)).toBe(false);
    expect(lines.some((line) => line.type === 'message' && line.message.session_id === run.child_session_id && line.message.role === 'tool')).toBe(true);
    expect(lines.at(-1)).toMatchObject({ type: 'session-end', status: 'completed', text: 'The scout streamed its survey.' });
  }, 60_000);

  it("streams a run on a worker to the dashboard's event stream of `cadre serve` (a host in another process) while it is open", async () => {
    const serve: CadreProcess = workspace.start(['serve', '--json', '--port', '0', ...workspace.modelFlags]);
    try {
      const ready = await until(
        async () => {
          const line = serve.output.stdout.split('\n').find((text) => text.startsWith('{'));
          return line ? (JSON.parse(line) as { url: string }) : undefined;
        },
        30_000,
        'cadre serve to listen',
      );
      const controller = new AbortController();
      const events = await fetch(new URL('/api/events', ready.url), { signal: controller.signal });
      expect(events.status).toBe(200);
      const seen: Seen[] = [];
      const reading = (async () => {
        const decoder = new TextDecoder();
        let buffer = '';
        for await (const chunk of events.body!) {
          buffer += decoder.decode(chunk as Uint8Array, { stream: true });
          let split: number;
          while ((split = buffer.indexOf('\n\n')) >= 0) {
            const data = buffer
              .slice(0, split)
              .split('\n')
              .find((line) => line.startsWith('data: '));
            buffer = buffer.slice(split + 2);
            if (data) seen.push({ at: Date.now(), event: JSON.parse(data.slice(6)) as CadreEvent });
          }
        }
      })().catch(() => {});
      const created = await fetch(new URL('/api/sessions', ready.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'stream please' }),
      });
      expect(created.status).toBe(201);
      const run = await until(
        async () =>
          seen
            .map(({ event }) => event)
            .find((event): event is Extract<CadreEvent, { type: 'run-event' }> => event.type === 'run-event' && event.event.type === 'run-end')?.run,
        30_000,
        `the run to end (seen: ${JSON.stringify(seen.map(({ event }) => event.type))}, serve said: ${serve.output.stderr})`,
      );
      controller.abort();
      await reading;
      const view = viewOf(seen, run);
      expect(view.text).toBe(streamedText);
      expect(view.outputBeforeEnd).toBe(true);
      expect(view.deltaCount).toBeGreaterThanOrEqual(5);
      expect(view.messages.length).toBeGreaterThanOrEqual(3);
      expect(workspace.workers.map((worker) => worker.child.pid).filter((pid) => view.pids.has(pid!))).toHaveLength(1);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  }, 90_000);

  it('reads neither the store nor the queue any more once a host closed with a run still out on a worker', async () => {
    let closedAt: number | null = null;
    const late: string[] = [];
    // The store as the host sees it: what it is asked after the host closed is noted, with who asked.
    const watchedStore = new Proxy(store, {
      get(target, key, receiver) {
        const value: unknown = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (closedAt !== null) late.push(`${String(key)} ${new Error().stack?.split('\n').find((line) => line.includes('/src/')) ?? ''}`);
          return (value as (...args: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const reports: unknown[] = [];
    const host = createCadre({ ...(await hostOptions()), store: watchedStore, coordination, queue, onError: (error) => reports.push(error) });
    const session = await host.createSession();
    expect((await host.send(session.id, 'slow background')).text).toBe('Started it in the background.');
    const workerPids = workspace.workers.map((worker) => worker.child.pid);
    const run = await until(
      async () => {
        const [current] = await store.listRuns({ parent_session_id: session.id });
        return current && workerPids.includes(Number(current.lease_owner?.split(':')[1])) ? current : undefined;
      },
      20_000,
      'a worker to hold the run',
    );
    await host.close();
    closedAt = Date.now();
    // The executor looked at the store and the queue every 2 s while the run was out.
    await new Promise((done) => setTimeout(done, 5_000));
    expect(late).toEqual([]);
    expect(reports).toEqual([]);
    // The run is still the worker's, to be resumed by a host later.
    expect((await store.getRun(run.id))?.status).toBe('running');
  }, 60_000);
});
