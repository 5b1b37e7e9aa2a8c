import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCadre, type Cadre } from '../runtime/create-cadre.ts';
import { describeModel } from '../models/describe-model.ts';
import { eventFixture, runFixture, sessionFixture } from '../store/store-fixtures.ts';
import { defineTool } from '../tools/define-tool.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel } from '../testing/index.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.ts';
import { resolveTelemetry } from './telemetry-settings.ts';

const receivers: OtlpReceiver[] = [];
const cadres: Cadre[] = [];
afterEach(async () => {
  for (const cadre of cadres.splice(0)) await cadre.close();
  for (const receiver of receivers.splice(0)) await receiver.close();
});

const secret = 'sk-test-0123456789abcdef';

/** A turn that starts a foreground run, then a background one whose end wakes the session. */
function makeCadre(endpoint: string, tracing: Parameters<typeof createCadre>[0]['tracing'] = {}) {
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    maxRetries: 0,
    secrets: [secret],
    // A write tool that asks, and with no one to answer, is denied.
    tools: {
      note: defineTool({ name: 'note', description: 'Writes a note', risk: 'write', inputSchema: z.object({ text: z.string() }), execute: () => 'written' }),
    },
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
    tracing,
    onError: (error) => {
      throw error;
    },
    model: scriptedLanguageModel((request) => {
      const last = request.messages.at(-1);
      // The background run ends after the turn, so its notification wakes the session.
      if (request.system.includes('general-purpose'))
        return { text: `subagent answer about ${secret}`, delay_ms: JSON.stringify(request.messages).includes('Later job') ? 300 : 0 };
      if (last?.role === 'user' && last.content.includes('<subagent-notification>')) return { text: 'noted' };
      if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'Look at the parser', description: 'parser' } }] };
      if (request.turn === 1)
        return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'Later job', description: 'later', run_in_background: true } }] };
      if (request.turn === 2) return { tool_calls: [{ name: 'note', arguments: { text: 'hello' } }] };
      return { text: 'done' };
    }),
  });
  cadres.push(cadre);
  return cadre;
}

async function traced(tracing: Parameters<typeof createCadre>[0]['tracing'] = {}) {
  const receiver = await startOtlpReceiver();
  receivers.push(receiver);
  const cadre = makeCadre(receiver.endpoint, tracing);
  const session = await cadre.createSession();
  await cadre.send(session.id, `Please look, my key is ${secret} and PROMPT-MARKER`);
  await cadre.waitForIdle(session.id);
  const runs = await cadre.store.listRuns({ parent_session_id: session.id });
  await cadre.close();
  cadres.splice(cadres.indexOf(cadre), 1);
  return { receiver, session, runs };
}

const byName = (spans: ReceivedSpan[], prefix: string) => spans.filter((span) => span.name.startsWith(prefix));

function ancestors(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const chain: ReceivedSpan[] = [];
  let current: ReceivedSpan | undefined = span;
  while (current?.parentSpanId) {
    current = spans.find((candidate) => candidate.spanId === current!.parentSpanId);
    if (current) chain.push(current);
  }
  return chain;
}

describe('OpenTelemetry traces', () => {
  it('nests each run under the tool call that started it, inside the primary turn, over OTLP/JSON', async () => {
    const { receiver, session, runs } = await traced({ protocol: 'http/json' });
    const { spans } = receiver;
    expect(receiver.requests.every((request) => request.path === '/v1/traces' && request.contentType.includes('json'))).toBe(true);

    const [turn, resumed] = byName(spans, 'cadre.turn');
    expect(turn?.attributes).toMatchObject({ 'cadre.session.id': session.id, 'cadre.agent': 'main', 'gen_ai.agent.name': 'main', 'cadre.turn.resumed': false });
    expect(turn?.parentSpanId).toBeUndefined();

    const foreground = runs.find((run) => run.mode === 'foreground')!;
    const background = runs.find((run) => run.mode === 'background')!;
    const runSpans = byName(spans, 'cadre.run');
    expect(runSpans).toHaveLength(2);
    for (const run of [foreground, background]) {
      const span = runSpans.find((candidate) => candidate.attributes['cadre.run.id'] === run.id)!;
      expect(span.attributes).toMatchObject({ 'cadre.session.id': run.child_session_id, 'cadre.agent': 'general', 'gen_ai.agent.name': 'general' });
      // The run span's parent is the AI SDK's span of the `agent` tool call in the primary turn.
      const parent = spans.find((candidate) => candidate.spanId === span.parentSpanId)!;
      expect(parent.attributes['gen_ai.tool.name']).toBe('agent');
      expect(parent.attributes['gen_ai.tool.call.id']).toBe(run.tool_call_id);
      expect(ancestors(spans, span)).toContain(turn);
      // The subagent's model calls are the AI SDK's spans under the run span.
      const modelCalls = spans.filter((candidate) => candidate.attributes['gen_ai.operation.name'] === 'chat' && ancestors(spans, candidate).includes(span));
      expect(modelCalls.length).toBeGreaterThan(0);
    }

    // The tool pipeline's tracing entry marks the AI SDK's tool spans with the caller and the outcome.
    const toolSpans = spans.filter(
      (span) =>
        span.name.startsWith('execute_tool') &&
        ancestors(spans, span).includes(turn!) &&
        !ancestors(spans, span).some((above) => above.name.startsWith('cadre.run')),
    );
    expect(
      toolSpans.map((span) => [
        span.attributes['gen_ai.tool.name'],
        span.attributes['cadre.tool.outcome'],
        span.attributes['cadre.session.id'],
        span.attributes['cadre.agent'],
      ]),
    ).toEqual([
      ['agent', 'ok', session.id, 'main'],
      ['agent', 'ok', session.id, 'main'],
      ['note', 'denied', session.id, 'main'],
    ]);

    // The turn the background run's end woke is a trace of its own, linked to that run.
    expect(resumed?.attributes['cadre.turn.resumed']).toBe(true);
    expect(resumed?.traceId).not.toBe(turn?.traceId);
    expect(resumed?.parentSpanId).toBeUndefined();
    const backgroundSpan = runSpans.find((candidate) => candidate.attributes['cadre.run.id'] === background.id)!;
    expect(resumed?.links).toContainEqual({ traceId: backgroundSpan.traceId, spanId: backgroundSpan.spanId });

    // Contents are left out by default.
    const everything = receiver.requests.map((request) => request.body.toString('utf8')).join('\n');
    expect(everything).not.toContain('PROMPT-MARKER');
    expect(everything).not.toContain('Look at the parser');
    expect(everything).not.toContain('subagent answer');
    expect(everything).not.toContain(secret);
  });

  it('records contents only with recordContent, and redacted', async () => {
    const { receiver } = await traced({ protocol: 'http/json', recordContent: true });
    const everything = receiver.requests.map((request) => request.body.toString('utf8')).join('\n');
    expect(everything).toContain('PROMPT-MARKER');
    expect(everything).toContain('Look at the parser');
    expect(everything).not.toContain(secret);
    expect(everything).toContain('[redacted]');
  });

  it('sends OTLP/protobuf by default', async () => {
    const { receiver, runs } = await traced();
    expect(receiver.requests.length).toBeGreaterThan(0);
    expect(receiver.requests.every((request) => request.contentType === 'application/x-protobuf')).toBe(true);
    const body = Buffer.concat(receiver.requests.map((request) => request.body));
    expect(body.includes('cadre.run.id')).toBe(true);
    expect(body.includes(runs[0]!.id)).toBe(true);
    expect(body.includes('PROMPT-MARKER')).toBe(false);
  });

  it('stays off, loading nothing, without an endpoint or with enabled: false', () => {
    expect(resolveTelemetry(undefined, {})).toBeNull();
    expect(resolveTelemetry({ enabled: false }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBeNull();
    expect(resolveTelemetry(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(resolveTelemetry(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      recordContent: false,
      serviceName: 'cadre',
    });
    expect(resolveTelemetry({ enabled: true }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'api' })).toMatchObject({
      url: 'http://localhost:4318/v1/traces',
      protocol: 'http/json',
      serviceName: 'api',
    });
    expect(() => resolveTelemetry({ enabled: true, protocol: 'grpc' as 'http/json' }, {})).toThrow(/http\/json or http\/protobuf, not 'grpc'/);
  });
});

describe('telemetry off', () => {
  it('loads no OpenTelemetry package while a runtime runs a turn with subagents', async () => {
    const { execFileSync } = await import('node:child_process');
    const { mkdtemp, readFile, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const folder = await mkdtemp(join(tmpdir(), 'cadre-otel-off-'));
    try {
      const record = join(folder, 'modules.txt');
      await writeFile(
        join(folder, 'record-modules.mjs'),
        `import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const loaded = new Set();
registerHooks({ resolve(specifier, context, next) { const result = next(specifier, context); loaded.add(result.url); return result; } });
process.on('exit', () => writeFileSync(${JSON.stringify(record)}, [...loaded].join('\\n')));
`,
      );
      const source = (path: string) => JSON.stringify(new URL(path, import.meta.url).pathname);
      const script = `const { createCadre } = await import(${source('../runtime/create-cadre.ts')});
const { createSqliteStore } = await import(${source('../store/sqlite/sqlite-store.ts')});
const { scriptedLanguageModel } = await import(${source('../testing/index.ts')});
const cadre = createCadre({ store: createSqliteStore({ path: ':memory:' }), maxRetries: 0, env: {}, model: scriptedLanguageModel((request) =>
  request.system.includes('general-purpose') ? { text: 'sub' } : request.turn === 0 ? { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 't', description: 'd' } }] } : { text: 'done' }) });
const session = await cadre.createSession();
const turn = await cadre.send(session.id, 'go');
await cadre.waitForIdle(session.id);
await cadre.close();
if (turn.status !== 'completed') process.exit(3);`;
      execFileSync(process.execPath, ['--import', join(folder, 'record-modules.mjs'), '--input-type=module', '-e', script], {
        cwd: folder,
        env: { PATH: process.env.PATH, HOME: folder },
      });
      const modules = (await readFile(record, 'utf8')).split('\n');
      expect(modules.some((url) => url.includes('/src/runtime/create-cadre.ts'))).toBe(true);
      expect(modules.filter((url) => /\/node_modules\/(@opentelemetry|@ai-sdk\/otel|pino)\//.test(url))).toEqual([]);
      expect(modules.filter((url) => url.includes('/src/telemetry/open-tracer.ts'))).toEqual([]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('a collector that is down', () => {
  it('says so once through onError and does not hold up close for long', async () => {
    const receiver = await startOtlpReceiver();
    await receiver.close();
    const errors: unknown[] = [];
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      maxRetries: 0,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
      tracing: { protocol: 'http/json' },
      onError: (error) => errors.push(error),
      model: scriptedLanguageModel([{ turns: [{ text: 'hello' }] }]),
    });
    const session = await cadre.createSession();
    expect(await cadre.send(session.id, 'hi')).toMatchObject({ status: 'completed', text: 'hello' });
    const started = Date.now();
    await cadre.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(errors.map((error) => (error as Error).message)).toEqual([`Traces could not be sent to ${receiver.endpoint}/v1/traces.`]);
    expect((errors[0] as Error).cause).toBeDefined();
  });
});

describe('a run resumed by another process', () => {
  it('nests under the tool call that started it, from the trace context stored in its run-queued event', async () => {
    const receiver = await startOtlpReceiver();
    receivers.push(receiver);
    const store = createSqliteStore({ path: ':memory:' });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const toolSpanId = '00f067aa0ba902b7';
    const model = scriptedLanguageModel((request) => (request.system.includes('general-purpose') ? { text: 'The facts.' } : { text: 'noted' }));
    // A run of a process that died mid-run, on a host that is gone: its lease ran out long ago.
    await store.createSession(sessionFixture({ id: 'ses_1', agent: 'main', model: describeModel(model) }));
    await store.createSession(sessionFixture({ id: 'ses_child_run_1', agent: 'general', model: describeModel(model), parent_run_id: 'run_1' }));
    await store.appendMessages([
      { session_id: 'ses_child_run_1', role: 'user', content: 'Find the facts about the store.', created_at: '2025-01-01T00:00:01.000Z' },
    ]);
    await store.insertRun(
      runFixture({
        agent: 'general',
        status: 'running',
        mode: 'background',
        started_at: '2025-01-01T00:00:01.500Z',
        lease_owner: 'gone-host:1:abcd',
        lease_expires_at: '2025-01-01T00:00:10.000Z',
      }),
      eventFixture('run_1', 'run-queued', { mode: 'background', trace: { traceparent: `00-${traceId}-${toolSpanId}-01` } }),
    );
    const cadre = createCadre({
      store,
      maxRetries: 0,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
      tracing: { protocol: 'http/json' },
      onError: (error) => {
        throw error;
      },
      model,
    });
    cadres.push(cadre);
    // A person's message waits for the run; it reaches the subagent once the run resumes.
    await cadre.sendToRun('run_1', 'Only the store, please.');
    expect((await cadre.recover()).resumed).toEqual(['run_1']);
    await cadre.waitForIdle('ses_1');
    expect(await store.getRun('run_1')).toMatchObject({ status: 'completed', error: null });
    await cadre.close();
    cadres.splice(cadres.indexOf(cadre), 1);
    const [runSpan] = byName(receiver.spans, 'cadre.run');
    expect(runSpan).toMatchObject({ traceId, parentSpanId: toolSpanId, attributes: { 'cadre.run.id': 'run_1', 'cadre.agent': 'general' } });
    // One span event per message, its text left out without recordContent.
    const messageEvents = runSpan.events.filter((event) => event.name === 'cadre.run.message');
    expect(messageEvents).toHaveLength(1);
    expect(messageEvents[0].attributes).toMatchObject({ 'cadre.message.from': 'person', 'cadre.message.interrupt': false });
    expect(messageEvents[0].attributes['cadre.message.text']).toBeUndefined();
    expect(receiver.spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat' && span.traceId === traceId).length).toBeGreaterThan(0);
  });

  it('puts a workflow in a span of its own, with the runs it started nested under it', async () => {
    const receiver = await startOtlpReceiver();
    receivers.push(receiver);
    const cadre = makeCadre(receiver.endpoint, { protocol: 'http/json' });
    const started = await cadre.startWorkflow(
      async (w: { parallel: (thunks: Array<() => Promise<unknown>>) => Promise<unknown[]>; agent: (agent: string, task: string) => Promise<unknown> }) =>
        w.parallel([() => w.agent('general', 'first'), () => w.agent('general', 'second')]),
      null,
      { name: 'pair' },
    );
    expect((await started.done).status).toBe('completed');
    await cadre.close();
    cadres.splice(cadres.indexOf(cadre), 1);
    const { spans } = receiver;
    const [workflow] = byName(spans, 'cadre.workflow pair');
    expect(workflow?.attributes['cadre.workflow.id']).toBe(started.id);
    const runSpans = byName(spans, 'cadre.run');
    expect(runSpans).toHaveLength(2);
    for (const span of runSpans) expect(ancestors(spans, span)).toContain(workflow);
  });
});
