import { generateText, isStepCount } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../agents/agent-definition.ts';
import type { Limits } from '../config/limits.ts';
import type { RunRecord } from '../store/records.ts';
import type { CadreRunPart } from '../embed/write-run-parts.ts';
import { exportSession } from '../export/export-session.ts';
import { renderMarkdownExport } from '../export/render-markdown-export.ts';
import { createDashboardApp } from '../server/create-server.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel, type ScriptedRequest, type ScriptedTurn } from '../testing/index.ts';
import { createCadre, type Cadre, type CadreOptions } from './create-cadre.ts';
import { toolOutputs } from './runtime-fixtures.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

const schema = {
  type: 'object',
  properties: { title: { type: 'string' }, count: { type: 'integer' } },
  required: ['title', 'count'],
  additionalProperties: false,
};

/**
 * A parent whose first turn calls `calls` (agent or agent_parallel inputs), then ends; the
 * subagent answers with `subagent`. Every subagent request is kept.
 */
function makeCadre({
  subagent,
  calls,
  limits = {},
  ...rest
}: {
  subagent: (request: ScriptedRequest) => ScriptedTurn;
  calls: Array<{ name: string; arguments: Record<string, unknown> }>;
  limits?: Partial<Limits>;
} & Partial<CadreOptions>) {
  const requests: ScriptedRequest[] = [];
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    maxRetries: 0,
    limits,
    onError: (error) => {
      throw error;
    },
    model: scriptedLanguageModel((request) => {
      if (request.system.includes('You condense')) return { text: 'SUMMARY' };
      if (!request.tools.includes('agent')) {
        requests.push(request);
        return subagent(request);
      }
      const call = calls[request.turn];
      return call ? { tool_calls: [call] } : { text: 'done' };
    }),
    ...rest,
  });
  open.push(cadre);
  return { cadre, requests };
}

async function delegate(cadre: Cadre) {
  const session = await cadre.createSession();
  await cadre.send(session.id, 'go');
  await cadre.waitForIdle(session.id);
  const runs = await cadre.store.listRuns({ parent_session_id: session.id });
  const messages = await cadre.store.listMessages(session.id);
  return { session, runs, run: runs[0], agent: toolOutputs(messages, 'agent'), parallel: toolOutputs(messages, 'agent_parallel') };
}

const agentCall = (input: Record<string, unknown> = {}) => ({
  name: 'agent',
  arguments: { agent: 'general', task: 'Count the files', output_schema: schema, ...input },
});

describe('results with a shape (output_schema)', () => {
  it('takes the value from the final tool: completed, result.value, and the parent reads output: json with the value indented', async () => {
    const { cadre, requests } = makeCadre({
      calls: [agentCall()],
      subagent: () => ({ tool_calls: [{ name: 'final_result', arguments: { title: 'files', count: 3 } }] }),
    });
    const { run, agent } = await delegate(cadre);
    expect(run.status).toBe('completed');
    expect(run.output_schema).toEqual(schema);
    const text = JSON.stringify({ title: 'files', count: 3 }, null, 2);
    expect(run.result).toEqual({ text, truncated: false, original_length: text.length, value: { title: 'files', count: 3 } });
    // The attempt ends with the call: no model call after it.
    expect(requests).toHaveLength(1);
    expect(requests[0].tools).toContain('final_result');
    expect(run.activity).toEqual({ kind: 'finished', status: 'completed', detail: 'json {"title":"files","count":3}' });
    expect(agent[0]).toBe(`run_id: ${run.id}\nagent: general\nstatus: completed\noutput: json\n\n${text}`);
  });

  it('takes the value from a final text that is JSON alone', async () => {
    const { cadre, requests } = makeCadre({ calls: [agentCall()], subagent: () => ({ text: '{"title": "files", "count": 4}' }) });
    const { run } = await delegate(cadre);
    expect(run.status).toBe('completed');
    expect(run.result?.value).toEqual({ title: 'files', count: 4 });
    expect(requests).toHaveLength(1);
  });

  it('sends an invalid value back naming the failing field, and completes with the repaired one', async () => {
    const { cadre, requests } = makeCadre({
      calls: [agentCall()],
      subagent: (request) =>
        request.messages.at(-1)?.content.includes('does not match the schema')
          ? { text: '{"title": "files", "count": 5}' }
          : { tool_calls: [{ name: 'final_result', arguments: { title: 7, count: 5 } }] },
    });
    const { run } = await delegate(cadre);
    expect(run.status).toBe('completed');
    expect(run.result?.value).toEqual({ title: 'files', count: 5 });
    expect(requests).toHaveLength(2);
    const repair = requests[1].messages.at(-1)!;
    expect(repair.role).toBe('user');
    expect(repair.content).toContain('title: must be string');
    const transcript = await cadre.store.listMessages(run.child_session_id);
    expect(transcript.filter((message) => message.role === 'user')).toHaveLength(2);
  });

  it('fails invalid_output after exactly 1 + maxOutputRepairs model calls, keeping the last text as partial_result', async () => {
    let answers = 0;
    const { cadre, requests } = makeCadre({
      calls: [agentCall()],
      limits: { maxOutputRepairs: 2 },
      subagent: () => ({ text: `I counted them, answer ${++answers}.` }),
    });
    const { run, agent } = await delegate(cadre);
    expect(requests).toHaveLength(3);
    expect(run.status).toBe('failed');
    expect(run.error?.kind).toBe('invalid_output');
    expect(run.error?.message).toMatch(/^No valid result \(asked again 2 times\): You ended without giving your result/);
    expect(run.partial_result).toBe('I counted them, answer 3.');
    expect(run.result).toBeNull();
    expect(agent[0]).toContain('status: failed\nerror: invalid_output: No valid result');
  });

  it('makes one model call and no repair with maxOutputRepairs 0, and reads a fenced JSON text as no value', async () => {
    const { cadre, requests } = makeCadre({
      calls: [agentCall()],
      limits: { maxOutputRepairs: 0 },
      subagent: () => ({ text: '```json\n{"title": "files", "count": 4}\n```' }),
    });
    const { run } = await delegate(cadre);
    expect(requests).toHaveLength(1);
    expect(run.status).toBe('failed');
    expect(run.error).toEqual({ kind: 'invalid_output', message: expect.stringContaining('code fence') });
  });

  it('never summarizes a value, and a value too long for the parent comes back as its top-level keys and how to page it', async () => {
    const big = { title: 'x'.repeat(3000), count: 1 };
    const { cadre } = makeCadre({
      calls: [agentCall()],
      summarize: { enabled: true, maxChars: 500 },
      limits: { maxResultChars: 1000 },
      subagent: () => ({ tool_calls: [{ name: 'final_result', arguments: big }] }),
    });
    const { run, agent } = await delegate(cadre);
    expect(run.status).toBe('completed');
    expect(run.result?.summarized).toBeUndefined();
    expect(run.result?.value).toEqual(big);
    const length = JSON.stringify(big, null, 2).length;
    expect(run.result).toMatchObject({ truncated: true, original_length: length });
    expect(agent[0]).toBe(
      `run_id: ${run.id}\nagent: general\nstatus: completed\noutput: json\ntruncated: ${length} characters, ${length} omitted\n` +
        `note: The value is longer than 1000 characters; page through its JSON with agent_output (run_id: ${run.id}, offset, limit).\n\n` +
        `A JSON object of ${length} characters, too long to show whole. Its top-level keys:\n- title: string (3000 characters)\n- count: number 1`,
    );
    const events = await cadre.store.listRunEvents(run.id);
    expect(events.some((event) => event.type === 'summary')).toBe(false);
  });

  it("uses the agent's zod outputSchema when the call gives none; the call's schema wins over it", async () => {
    const counter = defineAgent({
      name: 'counter',
      description: 'Counts things.',
      system: 'You count things.',
      mode: 'subagent',
      outputSchema: z.object({ total: z.number().int() }),
    });
    const { cadre, requests } = makeCadre({
      agents: [counter],
      calls: [
        { name: 'agent', arguments: { agent: 'counter', task: 'Count' } },
        { name: 'agent', arguments: { agent: 'counter', task: 'Count again', output_schema: schema } },
      ],
      subagent: (request) =>
        request.messages[0].content === 'Count' ? { text: '{"total": 12}' } : { tool_calls: [{ name: 'final_result', arguments: { title: 't', count: 1 } }] },
    });
    const { runs } = await delegate(cadre);
    const first = runs.find((run) => run.task === 'Count')!;
    const second = runs.find((run) => run.task === 'Count again')!;
    expect(first.output_schema).toMatchObject({ type: 'object', properties: { total: { type: 'integer' } }, required: ['total'] });
    expect(first.result?.value).toEqual({ total: 12 });
    expect(second.output_schema).toEqual(schema);
    expect(second.result?.value).toEqual({ title: 't', count: 1 });
    expect(requests).toHaveLength(2);
  });

  it('refuses an output_schema that is not a JSON Schema object with a tool error, and starts no run', async () => {
    const { cadre, requests } = makeCadre({
      calls: [
        agentCall({ output_schema: { type: 'string' } }),
        agentCall({ output_schema: { type: 'object', properties: { title: { type: 'text' } } } }),
        agentCall({ output_schema: 'a list of titles' }),
      ],
      subagent: () => ({ text: 'never' }),
    });
    const { runs, agent } = await delegate(cadre);
    expect(runs).toEqual([]);
    expect(requests).toEqual([]);
    expect(agent[0]).toContain('output_schema: the top level must be an object: set "type": "object" (it is "string")');
    expect(agent[1]).toMatch(/output_schema: is not a valid JSON Schema \(2020-12\): .*properties\/title\/type/);
    expect(agent[2]).toContain('must be a JSON Schema object');
  });

  it('keeps the schema on a follow-up (resume) of a schema run', async () => {
    let first = '';
    const requests: ScriptedRequest[] = [];
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      maxRetries: 0,
      onError: (error) => {
        throw error;
      },
      model: scriptedLanguageModel((request) => {
        if (!request.tools.includes('agent')) {
          requests.push(request);
          return { tool_calls: [{ name: 'final_result', arguments: { title: request.messages.at(-1)!.content, count: 1 } }] };
        }
        if (request.turn === 0) return { tool_calls: [agentCall({ task: 'first' })] };
        first ||= /run_id: (run_\w+)/.exec(request.messages.at(-1)!.content)![1];
        if (request.turn === 1) return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'second', resume: first } }] };
        return { text: 'done' };
      }),
    });
    open.push(cadre);
    const { runs } = await delegate(cadre);
    const followUp = runs.find((run) => run.resumed_from === first)!;
    expect(followUp.output_schema).toEqual(schema);
    expect(followUp.result?.value).toEqual({ title: 'second', count: 1 });
    expect(requests.at(-1)!.tools).toContain('final_result');
  });

  it('gives each agent_parallel task its own schema', async () => {
    const { cadre } = makeCadre({
      calls: [
        {
          name: 'agent_parallel',
          arguments: {
            tasks: [
              { agent: 'general', task: 'shaped', output_schema: schema },
              { agent: 'general', task: 'free' },
            ],
          },
        },
      ],
      subagent: (request) => (request.messages[0].content === 'shaped' ? { text: '{"title": "p", "count": 2}' } : { text: 'plain words' }),
    });
    const { runs, parallel } = await delegate(cadre);
    const shaped = runs.find((run) => run.task === 'shaped')!;
    const free = runs.find((run) => run.task === 'free')!;
    expect(shaped.result?.value).toEqual({ title: 'p', count: 2 });
    expect(free.output_schema).toBeNull();
    expect(free.result).toEqual({ text: 'plain words', truncated: false, original_length: 11 });
    expect(parallel[0]).toContain('output: json\n\n{\n  "title": "p",\n  "count": 2\n}');
  });

  it("works through cadre.tools() in an app's own loop: the value in the tool output, the data-cadre-run part, the HTTP API and the export", async () => {
    const { cadre } = makeCadre({ calls: [], subagent: () => ({ tool_calls: [{ name: 'final_result', arguments: { title: 'app', count: 9 } }] }) });
    const app = scriptedLanguageModel((request) => (request.turn === 0 ? { tool_calls: [agentCall({ task: 'From the app' })] } : { text: 'app done' }));
    const result = await generateText({ model: app, prompt: 'go', tools: cadre.tools({ sessionId: 'chat-1' }), stopWhen: isStepCount(3) });
    const output = result.steps[0].toolResults[0].output as { output: string };
    expect(output.output).toContain('status: completed\noutput: json\n\n{\n  "title": "app",\n  "count": 9\n}');
    const parts: CadreRunPart[] = [];
    await cadre.writeRunParts({ write: (part) => parts.push(part) }, { sessionId: 'chat-1' });
    expect(parts.at(-1)?.data).toMatchObject({ status: 'completed', value: { title: 'app', count: 9 } });
    const dashboard = createDashboardApp({ cadre });
    const [run] = await cadre.store.listRuns({ parent_session_id: 'chat-1' });
    const detail = (await (await dashboard.request(`/api/runs/${run.id}`)).json()) as { run: RunRecord };
    expect(detail.run).toMatchObject({ output_schema: schema, result: { value: { title: 'app', count: 9 } } });
    const exported = await exportSession(cadre.store, 'chat-1');
    expect(exported.runs[0]).toMatchObject({ output_schema: schema, result: { value: { title: 'app', count: 9 } } });
    expect(renderMarkdownExport(exported)).toContain('**Value** (output: json, 34 characters, matched its output_schema)\n\n```json\n{\n  "title": "app",');
  });
});
