import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCadre } from '../src/runtime/create-cadre.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { startScriptedServer, type ScriptedRequest, type ScriptedServer, type ScriptedTurn, type ScriptedWire } from '../src/testing/index.ts';
import { defineTool } from '../src/tools/define-tool.ts';
import { cadreBin } from './helpers/cadre-cli.ts';
import { scriptedWires, wireModels } from './helpers/wires.ts';

const task = 'Check the spelling.';
/** What the Anthropic wire reports for every answer: most of the input read from the cache. */
const cachedUsage = { input_tokens: 1000, output_tokens: 10, cache_read_input_tokens: 800, cache_creation_input_tokens: 150 };

const lastUser = (request: ScriptedRequest) => request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
const called = (request: ScriptedRequest, name: string) => request.messages.some((message) => message.tool_calls?.some((call) => call.name === name));

/** The primary looks a word up, then forks itself; the fork answers; the primary ends. */
function respond(request: ScriptedRequest): ScriptedTurn {
  const usage = request.wire === 'messages' ? { usage: cachedUsage } : {};
  if (lastUser(request).includes(task)) return { text: 'Spelled right.', ...usage };
  if (!called(request, 'lookup')) return { tool_calls: [{ name: 'lookup', arguments: { word: 'vole' } }], ...usage };
  if (!called(request, 'agent')) return { tool_calls: [{ name: 'agent', arguments: { fork: true, task } }], ...usage };
  return { text: 'All done.', ...usage };
}

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  inputSchema: z.object({ word: z.string() }),
  execute: ({ word }) => `${word}: a small furry animal`,
});

/** A copy without Anthropic's prompt-cache marks, wherever they are. */
function withoutCacheMarks(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCacheMarks);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).flatMap(([key, item]) => (key === 'cache_control' ? [] : [[key, withoutCacheMarks(item)]])));
}

/** Where each wire keeps the conversation in a request body. */
const conversationKey: Record<ScriptedWire, string> = { 'chat-completions': 'messages', messages: 'messages', responses: 'input' };

/**
 * The conversation of a request body as a list of items: a message each on Chat Completions, an
 * input item each on Responses, and a content part each (with its role) on Messages, whose
 * consecutive user messages travel as one.
 */
function items(wire: ScriptedWire, body: Record<string, unknown>): unknown[] {
  const conversation = body[conversationKey[wire]] as Array<{ role: string; content: unknown }>;
  if (wire !== 'messages') return conversation;
  return conversation.flatMap(({ role, content }) =>
    (typeof content === 'string' ? [{ type: 'text', text: content }] : (content as object[])).map((part) => ({ role, ...part })),
  );
}

function countMarks(value: unknown): number {
  return (JSON.stringify(value).match(/"cache_control"/g) ?? []).length;
}

let server: ScriptedServer;
let folder: string;
beforeAll(async () => {
  server = await startScriptedServer({ script: respond });
  folder = await mkdtemp(join(tmpdir(), 'cadre-fork-wires-'));
});
afterAll(async () => {
  await server.close();
  await rm(folder, { recursive: true, force: true });
});

describe.each(scriptedWires)('a fork on the %s wire', (wire) => {
  it("sends as its first request the parent's last request plus the task, apart from cache marks", async () => {
    const before = server.received.length;
    const path = join(folder, `${wire}.db`);
    const cadre = createCadre({
      store: createSqliteStore({ path }),
      model: wireModels[wire].model,
      baseURL: server.baseURL,
      env: wireModels[wire].env,
      tools: { lookup },
      maxRetries: 0,
    });
    const session = await cadre.createSession();
    const turn = await cadre.send(session.id, 'What is a vole?');
    expect(turn).toMatchObject({ status: 'completed', text: 'All done.' });
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(run).toMatchObject({ status: 'completed', agent: 'main', forked_from: session.id, result: { text: 'Spelled right.' } });
    await cadre.close();

    const bodies = server.received
      .slice(before)
      .filter((request) => request.method === 'POST' && !request.path.endsWith('count_tokens'))
      .map((request) => request.body as Record<string, unknown>);
    // The primary's lookup, its fork call, the fork's answer, the primary's end.
    expect(bodies).toHaveLength(4);
    const [, parentLast, child] = bodies;
    const { [conversationKey[wire]]: _parentConversation, ...parentRest } = parentLast;
    const { [conversationKey[wire]]: _childConversation, ...childRest } = child;
    // The same model, system prompt, tools (the delegation tools among them) and settings.
    expect(withoutCacheMarks(childRest)).toEqual(withoutCacheMarks(parentRest));
    expect(JSON.stringify(childRest)).toContain('agent_parallel');
    const parentItems = items(wire, withoutCacheMarks(parentLast) as Record<string, unknown>);
    const childItems = items(wire, withoutCacheMarks(child) as Record<string, unknown>);
    expect(childItems.slice(0, parentItems.length)).toEqual(parentItems);
    const added = childItems.slice(parentItems.length);
    expect(added).toHaveLength(1);
    expect(JSON.stringify(added)).toContain(task);
    expect(JSON.stringify(parentItems)).toContain('vole: a small furry animal');

    if (wire === 'messages') {
      // Two breakpoints in every request: after the tools and system prompt, on the last message.
      for (const body of bodies) {
        expect(countMarks(body)).toBe(2);
        const system = body.system as Array<{ cache_control?: unknown }>;
        expect(system.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
        const last = (body.messages as Array<{ content: Array<{ cache_control?: unknown }> }>).at(-1)!;
        expect(last.content.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
      }
      expect(run.usage).toEqual({ input_tokens: 1000, output_tokens: 10, cache_read_tokens: 800, cache_write_tokens: 150 });
      const shown = await cadreShow(run.id, path);
      expect(shown).toMatch(/tokens: {6}1000 in, 10 out \(cache: 800 read from the prompt cache, 150 written to it\)/);
      expect(shown).toContain(`forked:      from ${session.id}`);
      // The primary's own tokens keep their cache counts too (three answers).
      const reopened = createSqliteStore({ path });
      expect(await reopened.getSessionUsage(session.id)).toEqual({ input_tokens: 3000, output_tokens: 30, cache_read_tokens: 2400, cache_write_tokens: 450 });
      await reopened.close();
    } else {
      expect(bodies.map(countMarks)).toEqual([0, 0, 0, 0]);
    }
  });
});

/** `cadre show RUN_ID --db PATH` in a process of its own. */
async function cadreShow(runId: string, path: string): Promise<string> {
  const child = spawn(process.execPath, [cadreBin, 'show', runId, '--db', path], { env: { PATH: process.env.PATH ?? '', HOME: folder, NO_COLOR: '1' } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return stdout;
}
