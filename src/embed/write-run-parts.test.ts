import { createUIMessageStream, generateText, isStepCount, readUIMessageStream, tool } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../agents/agent-definition.ts';
import { createCadre, type Cadre } from '../runtime/create-cadre.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel, type RespondFunction } from '../testing/index.ts';
import type { CadreRunPart } from './write-run-parts.ts';
import { eventually } from '../../test/helpers/eventually.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

/** The app starts a lead in the background; the lead delegates to a helper, whose `deploy` call asks. */
const respond: RespondFunction = (request) => {
  const last = request.messages.at(-1)!;
  if (request.system.includes('You are the helper')) {
    return last.role === 'tool' ? { text: `helper: ${last.content}` } : { tool_calls: [{ name: 'deploy', arguments: { target: 'staging' } }] };
  }
  if (request.system.includes('You are the lead')) {
    return last.role === 'tool'
      ? { text: 'lead done' }
      : { tool_calls: [{ name: 'agent', arguments: { agent: 'helper', task: 'deploy it', description: 'deploy' } }] };
  }
  if (request.system.includes('You are the quick one')) return { text: 'quick done', delay_ms: 30 };
  if (last.role === 'tool') return { text: 'started' };
  return {
    tool_calls: [
      { name: 'agent', arguments: { agent: 'lead', task: 'lead the deploy', description: 'lead', run_in_background: true } },
      { name: 'agent', arguments: { agent: 'quick', task: 'be quick', description: 'quick', run_in_background: true } },
    ],
  };
};

function makeCadre() {
  const model = scriptedLanguageModel(respond);
  const deploy = tool({ description: 'Deploys', inputSchema: z.object({ target: z.string() }), execute: ({ target }) => `deployed to ${target}` });
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    model,
    maxRetries: 0,
    approvals: 'wait',
    permissions: { ask: ['deploy'] },
    tools: { deploy },
    limits: { maxDepth: 2 },
    agents: [
      defineAgent({ name: 'lead', description: 'Leads.', system: 'You are the lead.', tools: [], mode: 'subagent' }),
      defineAgent({ name: 'helper', description: 'Helps.', system: 'You are the helper.', tools: ['deploy'], mode: 'subagent' }),
      defineAgent({ name: 'quick', description: 'Quick.', system: 'You are the quick one.', tools: [], mode: 'subagent' }),
    ],
    onError: (error) => {
      throw error;
    },
  });
  open.push(cadre);
  return { cadre, model };
}

/** A writer that keeps each run's latest part and every status it went through. */
function recordingWriter() {
  const latest = new Map<string, CadreRunPart['data']>();
  const statuses = new Map<string, string[]>();
  return {
    latest,
    statuses,
    write(part: CadreRunPart) {
      expect(part.type).toBe('data-cadre-run');
      latest.set(part.id, part.data);
      const seen = statuses.get(part.id) ?? [];
      if (seen.at(-1) !== part.data.status) seen.push(part.data.status);
      statuses.set(part.id, seen);
    },
  };
}

async function until(check: () => boolean | Promise<boolean>) {
  await eventually(check);
}

describe('cadre.writeRunParts', () => {
  it('writes every run at any depth live, brings an ask to the card, and ends when the runs have ended', async () => {
    const { cadre, model } = makeCadre();
    const writer = recordingWriter();
    const loop = generateText({ model, instructions: 'You are the app.', prompt: 'go', tools: cadre.tools({ sessionId: 'chat' }), stopWhen: isStepCount(3) });
    const writing = cadre.writeRunParts(writer, { sessionId: 'chat', loop, throttleMs: 10 });
    await until(() => [...writer.latest.values()].some((card) => card.approval !== null));
    const [helperId, helper] = [...writer.latest.entries()].find(([, card]) => card.agent === 'helper')!;
    const leadId = [...writer.latest.entries()].find(([, card]) => card.agent === 'lead')![0];
    expect(helper).toMatchObject({
      status: 'running',
      parent_run_id: leadId,
      description: 'deploy',
      approval: { tool: 'deploy', summary: 'deploy', risk: expect.any(String) },
    });

    // A page that comes back now sees every run as it stands, the ask included.
    const reconnected = recordingWriter();
    const controller = new AbortController();
    const again = cadre.writeRunParts(reconnected, { sessionId: 'chat', signal: controller.signal });
    await until(() => reconnected.latest.size === 3);
    expect(reconnected.latest.get(helperId)?.approval?.id).toBe(helper.approval!.id);
    controller.abort();
    await again;

    await cadre.approve(helper.approval!.id, { decision: 'approve' });
    await writing;
    const finals = [...writer.latest.values()].map((card) => [card.agent, card.status, card.approval]);
    expect(finals.sort()).toEqual([
      ['helper', 'completed', null],
      ['lead', 'completed', null],
      ['quick', 'completed', null],
    ]);
    // Statuses only move forward; the card saw the lead queued or running before it completed.
    expect(writer.statuses.get(leadId)!.at(-1)).toBe('completed');
    expect(writer.statuses.get(leadId)!.length).toBeGreaterThan(1);
    expect(writer.latest.get(helperId)?.usage.output_tokens).toBeGreaterThan(0);
  });

  it('leaves out finished runs at first with runs: active, so a new answer does not repeat earlier cards', async () => {
    const { cadre, model } = makeCadre();
    const writer = recordingWriter();
    const loop = generateText({
      model,
      instructions: 'You are the app.',
      prompt: 'go',
      tools: cadre.tools({ sessionId: 'chat-active' }),
      stopWhen: isStepCount(3),
    });
    await loop;
    await until(async () => (await cadre.store.listRuns({ parent_session_id: 'chat-active', statuses: ['completed'] })).length > 0);
    const answering = (async () => {
      await until(async () => (await cadre.pendingApprovals({ sessionId: 'chat-active' })).length > 0);
      const [ask] = await cadre.pendingApprovals({ sessionId: 'chat-active' });
      await cadre.approve(ask!.id, { decision: 'approve' });
    })();
    await cadre.writeRunParts(writer, { sessionId: 'chat-active', runs: 'active', throttleMs: 10 });
    await answering;
    // The quick run had finished before: no card for it; the others were still going.
    expect([...writer.latest.values()].map((card) => card.agent).sort()).toEqual(['helper', 'lead']);
    const all = recordingWriter();
    await cadre.writeRunParts(all, { sessionId: 'chat-active' });
    expect(all.latest.size).toBe(3);
  });

  it('ends at once for a session with no active run, after writing what there is', async () => {
    const { cadre } = makeCadre();
    const writer = recordingWriter();
    await cadre.writeRunParts(writer, { sessionId: 'empty' });
    expect(writer.latest.size).toBe(0);
  });

  it('reaches useChat as one data part per run, updated in place', async () => {
    const { cadre, model } = makeCadre();
    const stream = createUIMessageStream({
      execute: async ({ writer }) => {
        writer.write({ type: 'start' });
        const loop = generateText({
          model,
          instructions: 'You are the app.',
          prompt: 'go',
          tools: cadre.tools({ sessionId: 'chat-ui' }),
          stopWhen: isStepCount(3),
        });
        const answering = (async () => {
          await until(async () => (await cadre.pendingApprovals({ sessionId: 'chat-ui' })).length > 0);
          const [ask] = await cadre.pendingApprovals({ sessionId: 'chat-ui' });
          await cadre.approve(ask!.id, { decision: 'deny' });
        })();
        await cadre.writeRunParts(writer, { sessionId: 'chat-ui', loop, throttleMs: 10 });
        await answering;
      },
    });
    let last;
    for await (const message of readUIMessageStream({ stream })) last = message;
    const cards = last!.parts.filter((part) => part.type === 'data-cadre-run') as unknown as CadreRunPart[];
    expect(cards.map((card) => card.data.agent).sort()).toEqual(['helper', 'lead', 'quick']);
    expect(new Set(cards.map((card) => card.id)).size).toBe(3);
    expect(cards.every((card) => card.data.status === 'completed')).toBe(true);
  });
});
