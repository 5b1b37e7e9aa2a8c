import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../test/helpers/eventually.ts';
import { z } from 'zod';
import type { Limits } from '../config/limits.ts';
import { createDashboardApp } from '../server/create-server.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel, type RespondFunction, type ScriptedRequest } from '../testing/index.ts';
import { createCadre, type Cadre } from './create-cadre.ts';
import { defineTool } from '../tools/define-tool.ts';
import { toolOutputs } from './runtime-fixtures.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

/** A tool of the workspace, so the conversation a fork copies holds a tool call and its result. */
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  inputSchema: z.object({ word: z.string() }),
  execute: ({ word }) => `${word}: a small furry animal`,
});

function makeCadre(respond: RespondFunction, limits: Partial<Limits> = {}, path = ':memory:', now?: () => string) {
  const requests: ScriptedRequest[] = [];
  const cadre = createCadre({
    store: createSqliteStore({ path }),
    ...(now ? { now } : {}),
    model: scriptedLanguageModel((request) => {
      requests.push(request);
      return respond(request);
    }),
    tools: { lookup },
    limits,
    maxRetries: 0,
    onError: (error) => {
      throw error;
    },
  });
  open.push(cadre);
  return { cadre, requests };
}

const lastUser = (request: ScriptedRequest) => request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
const calledTool = (request: ScriptedRequest, name: string) => request.messages.some((message) => message.tool_calls?.some((call) => call.name === name));

/** The primary looks a word up, then forks with `fork`; the fork answers; the primary ends. */
function forkingParent(fork: Record<string, unknown>, forkAnswer: RespondFunction = () => ({ text: 'Forked answer.' })): RespondFunction {
  return (request) => {
    if (lastUser(request).includes('Check the spelling')) return forkAnswer(request);
    if (!calledTool(request, 'lookup')) return { tool_calls: [{ name: 'lookup', arguments: { word: 'vole' } }] };
    if (!calledTool(request, 'agent')) return { tool_calls: [{ name: 'agent', arguments: { fork: true, task: 'Check the spelling.', ...fork } }] };
    return { text: 'All done.' };
  };
}

describe('forked runs', () => {
  it("start with the parent's conversation up to the call, then the task, with the parent's prompt, tools and record", async () => {
    const { cadre, requests } = makeCadre(forkingParent({}));
    const session = await cadre.createSession();
    const turn = await cadre.send(session.id, 'What is a vole?');
    expect(turn).toMatchObject({ status: 'completed', text: 'All done.' });
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(run).toMatchObject({ status: 'completed', agent: 'main', forked_from: session.id, depth: 1, result: { text: 'Forked answer.' } });

    const parentLast = requests.find((request) => request.messages.at(-1)?.role === 'tool' && !calledTool(request, 'agent'))!;
    const child = requests.find((request) => lastUser(request).includes('Check the spelling'))!;
    expect(child.system).toBe(parentLast.system);
    expect(child.tools).toEqual(parentLast.tools);
    expect(child.tools).toContain('agent');
    expect(child.messages).toEqual([...parentLast.messages, { role: 'user', content: 'Check the spelling.' }]);

    // The copy is the child session's own: a crash and resume read it back from the store.
    const copied = await cadre.store.listMessages(run.child_session_id);
    expect(copied.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
    expect(copied[0].content).toBe('What is a vole?');
    expect(toolOutputs(copied, 'lookup')).toEqual(['vole: a small furry animal']);
    expect((await cadre.store.getSession(run.child_session_id))?.model).toBe(session.model);
    // The HTTP API's record names it too.
    const app = createDashboardApp({ cadre });
    expect((await (await app.request(`/api/runs/${run.id}`)).json()).run).toMatchObject({ id: run.id, forked_from: session.id });
  });

  it("given another agent, keep the parent's conversation with that agent's prompt and tools", async () => {
    const { cadre, requests } = makeCadre(forkingParent({ agent: 'general' }));
    const session = await cadre.createSession();
    await cadre.send(session.id, 'What is a vole?');
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(run).toMatchObject({ status: 'completed', agent: 'general', forked_from: session.id });
    const parentLast = requests.find((request) => request.messages.at(-1)?.role === 'tool' && !calledTool(request, 'agent'))!;
    const child = requests.find((request) => lastUser(request).includes('Check the spelling'))!;
    expect(child.system).toContain('general-purpose subagent');
    expect(parentLast.system).not.toContain('general-purpose subagent');
    // general at the depth limit (1) has no delegation tools.
    expect(child.tools).toEqual(['lookup']);
    expect(child.messages).toEqual([...parentLast.messages, { role: 'user', content: 'Check the spelling.' }]);
  });

  it('refuse, as a tool error, a delegation the depth limit forbids to a fork that keeps its delegation tools', async () => {
    const { cadre } = makeCadre(
      forkingParent({}, (request) =>
        calledTool(request, 'agent') && request.messages.at(-1)?.role === 'tool'
          ? { text: 'I will do it myself.' }
          : { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'Go deeper.' } }] },
      ),
      { maxDepth: 1 },
    );
    const session = await cadre.createSession();
    await cadre.send(session.id, 'What is a vole?');
    const runs = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'completed', result: { text: 'I will do it myself.' } });
    const [refusal] = toolOutputs(await cadre.store.listMessages(runs[0].child_session_id), 'agent');
    expect(refusal).toMatch(/^Delegation is not allowed at this depth: this agent runs at depth 1 and limits\.maxDepth is 1\./);
    expect(await cadre.store.listRuns({ parent_session_id: runs[0].child_session_id })).toEqual([]);
  });

  it("of a subagent copy that run's conversation and name the run", async () => {
    const { cadre, requests } = makeCadre(
      (request) => {
        const general = request.system.includes('general-purpose subagent');
        if (general && lastUser(request).includes('Check the spelling')) return { text: 'Spelled right.' };
        if (general && !calledTool(request, 'agent'))
          return { tool_calls: [{ name: 'agent', arguments: { fork: true, agent: 'general', task: 'Check the spelling.' } }] };
        if (general) return { text: 'Research done.' };
        if (!calledTool(request, 'agent')) return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'Research voles.' } }] };
        return { text: 'All done.' };
      },
      { maxDepth: 2 },
    );
    const session = await cadre.createSession();
    await cadre.send(session.id, 'What is a vole?');
    const [outer] = await cadre.store.listRuns({ parent_session_id: session.id });
    const [inner] = await cadre.store.listRuns({ parent_session_id: outer.child_session_id });
    expect(inner).toMatchObject({ status: 'completed', agent: 'general', depth: 2, forked_from: outer.id, parent_run_id: outer.id });
    const child = requests.find((request) => lastUser(request).includes('Check the spelling'))!;
    expect(child.messages).toEqual([
      { role: 'user', content: 'Research voles.' },
      { role: 'user', content: 'Check the spelling.' },
    ]);
    // It keeps its parent's tools, delegation tools included, at the depth limit.
    expect(child.tools).toContain('agent');
  });

  it('resume after a crash from the copy in their child session', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'cadre-fork-crash-'));
    const path = join(folder, 'cadre.db');
    try {
      // The first process dies (closes) while the fork waits for its model.
      const first = makeCadre(
        forkingParent({ run_in_background: true }, () => ({ text: 'never', delay_ms: 60_000 })),
        {},
        path,
      );
      const session = await first.cadre.createSession();
      await first.cadre.send(session.id, 'What is a vole?');
      const [started] = await first.cadre.store.listRuns({ parent_session_id: session.id });
      await first.cadre.close();
      open.splice(open.indexOf(first.cadre), 1);
      const parentLast = first.requests.find((request) => request.messages.at(-1)?.role === 'tool' && !calledTool(request, 'agent'))!;

      // A second one, once the lease ran out, takes the run over and goes on from the stored copy.
      const later = () => new Date(Date.parse(started.created_at) + 3_600_000).toISOString();
      const second = makeCadre(
        forkingParent({}, () => ({ text: 'Spelled right.' })),
        {},
        path,
        later,
      );
      const report = await second.cadre.recover({ sessionId: session.id });
      expect(report.resumed).toEqual([started.id]);
      const run = await second.cadre.store.getRun(started.id);
      expect(run).toMatchObject({ forked_from: session.id });
      await eventually(async () => expect((await second.cadre.store.getRun(started.id))?.status).toBe('completed'));
      const resumed = second.requests.find((request) => lastUser(request).includes('Check the spelling'))!;
      expect(resumed.messages).toEqual([...parentLast.messages, { role: 'user', content: 'Check the spelling.' }]);
      expect(resumed.tools).toEqual(parentLast.tools);
    } finally {
      for (const cadre of open.splice(0)) await cadre.close();
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('say what to fix when the agent is missing without fork, or fork comes with resume', async () => {
    const { cadre } = makeCadre((request) => {
      if (request.messages.at(-1)?.role === 'tool' && request.messages.filter((message) => message.role === 'tool').length === 2) return { text: 'ok' };
      if (request.messages.at(-1)?.role === 'tool') return { tool_calls: [{ name: 'agent', arguments: { fork: true, task: 'x', resume: 'run_1' } }] };
      return { tool_calls: [{ name: 'agent', arguments: { task: 'x' } }] };
    });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    const outputs = toolOutputs(await cadre.store.listMessages(session.id), 'agent');
    expect(outputs[0]).toMatch(/agent: Required\. Name the agent to delegate to \(only with fork: true may it be left out\)/);
    expect(outputs[1]).toMatch(/fork: cannot be combined with resume/);
    expect(await cadre.store.listRuns({ parent_session_id: session.id })).toEqual([]);
  });
});
