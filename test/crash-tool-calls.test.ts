import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MessageRecord } from '../src/store/records.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { startScriptedServer, type ScriptedMessage, type ScriptedServer, type ScriptedTurn } from '../src/testing/index.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

let workspace: Workspace | undefined;
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  await workspace?.close();
});

interface StoredCall {
  id: string;
  tool: string;
  seq: number;
}

/** The tool calls of a stored transcript and the seqs of the messages holding each call's results. */
function pairing(messages: readonly MessageRecord[]) {
  const calls: StoredCall[] = [];
  const results = new Map<string, number[]>();
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as Array<{ type: string; toolCallId?: string; toolName?: string }>) {
      if (part.type === 'tool-call') calls.push({ id: part.toolCallId!, tool: part.toolName!, seq: message.seq });
      if (part.type === 'tool-result') results.set(part.toolCallId!, [...(results.get(part.toolCallId!) ?? []), message.seq]);
    }
  }
  return { calls, results };
}

/** Every call has exactly one result, in the message right after the call's; no result without its call. */
function expectEveryCallAnswered(messages: readonly MessageRecord[]): void {
  const { calls, results } = pairing(messages);
  const seqs = messages.map((message) => message.seq);
  for (const call of calls) {
    const answers = results.get(call.id) ?? [];
    expect(answers, `results of ${call.tool} ${call.id}`).toHaveLength(1);
    expect(seqs.indexOf(answers[0]), `result of ${call.id} follows its call`).toBe(seqs.indexOf(call.seq) + 1);
  }
  for (const id of results.keys()) expect(calls.map((call) => call.id)).toContain(id);
}

/** A request a provider that checks pairing would accept: each call answered right after its message. */
function expectWellFormed(messages: readonly ScriptedMessage[]): void {
  const answered = new Set<string>();
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    if (message.role === 'tool') {
      expect(answered.has(message.tool_call_id!), `tool message for ${message.tool_call_id} answers an open call`).toBe(false);
      continue;
    }
    expect(answered.size, `unanswered calls before message ${index}`).toBe(0);
    for (const call of message.tool_calls ?? []) answered.add(call.id);
    let next = index + 1;
    while (messages[next]?.role === 'tool') {
      const id = messages[next].tool_call_id!;
      expect(answered.delete(id), `a tool message answers call ${id} of message ${index}`).toBe(true);
      next++;
    }
    expect([...answered], `calls of message ${index} left without a result`).toEqual([]);
    index = next - 1;
  }
}

describe('cadre run killed with SIGKILL while the primary agent waits on a foreground run', () => {
  it('keeps the calls that started runs: after recovery every stored call has one result and the next request is well-formed', async () => {
    workspace = await createWorkspace();
    // Reads ask and nobody answers: the scout's list_files (and the primary's read_file) wait.
    await writeFile(join(workspace.cwd, 'ask.config.json'), JSON.stringify({ permissions: { ask: ['read'] } }));
    let crashed = false;
    server = await startScriptedServer({
      script: (request): ScriptedTurn => {
        const last = request.messages.at(-1);
        if (request.system.includes('You are the scout')) {
          if (!crashed) return { tool_calls: [{ name: 'list_files', arguments: { path: '.' } }] };
          return { text: 'Scout report: notes.txt and src/app.ts.' };
        }
        if (last?.role === 'user' && last.content.includes('<subagent-notification>')) return { text: 'The scout reported after all.' };
        if (last?.role === 'user' && last.content.includes('How is the scout doing')) return { text: 'The scout goes on in the background.' };
        return {
          tool_calls: [
            { name: 'read_file', arguments: { path: 'notes.txt' } },
            { name: 'agent', arguments: { agent: 'scout', task: 'List the workspace', description: 'list files' } },
          ],
        };
      },
    });
    const flags = ['--model', 'openai-compatible:scripted', '--base-url', server.baseURL, '--db', workspace.database];
    const first = workspace.start(['run', ...flags, '--config', 'ask.config.json', '--approvals', 'wait', 'Start the scout']);
    await first.waitForStderr(/scout \(run_\w+\) asks to run: list_files/, 20_000);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const store = createSqliteStore({ path: workspace.database });
    const [run] = await store.listRuns({});
    expect(run).toMatchObject({ agent: 'scout', status: 'running', mode: 'foreground' });
    const sessionId = run.parent_session_id;
    // The call that started the run was stored before it ran, with the primary's other call.
    const before = pairing(await store.listMessages(sessionId));
    expect(before.calls.map((call) => call.tool).sort()).toEqual(['agent', 'read_file']);
    expect(before.calls.map((call) => call.id)).toContain(run.tool_call_id);
    expect(pairing(await store.listMessages(run.child_session_id)).calls.map((call) => call.tool)).toEqual(['list_files']);

    crashed = true;
    const requestsBefore = server.requests.length;
    const second = await workspace.run(['run', ...flags, '--session', sessionId, 'How is the scout doing?']);
    expect(second.code, second.stderr).toBe(0);

    const parent = await store.listMessages(sessionId);
    expectEveryCallAnswered(parent);
    const child = await store.listMessages(run.child_session_id);
    expectEveryCallAnswered(child);
    const texts = (messages: readonly MessageRecord[]) =>
      JSON.stringify(messages.filter((message) => message.role === 'tool').map((message) => message.content));
    expect(texts(parent)).toContain(`${run.id} (scout)`);
    expect(texts(parent)).toMatch(/process stopped before this call finished/);
    expect(texts(child)).toMatch(/process stopped before this call finished/);
    // No stored call carries the mark of a call still under way.
    expect(JSON.stringify([...parent, ...child])).not.toContain('pending_owner');

    const after = server.requests.slice(requestsBefore);
    const primary = after.filter((request) => !request.system.includes('You are the scout'));
    const scout = after.filter((request) => request.system.includes('You are the scout'));
    expect(primary.length).toBeGreaterThan(0);
    expect(scout.length).toBeGreaterThan(0);
    for (const request of after) expectWellFormed(request.messages);
    // The model sees the calls it made before the crash, answered.
    expect(primary[0].messages[1]).toMatchObject({ role: 'assistant' });
    expect(primary[0].messages[1].tool_calls?.map((call) => call.name).sort()).toEqual(['agent', 'read_file']);
    expect(scout[0].messages[1].tool_calls?.map((call) => call.name)).toEqual(['list_files']);

    const recovered = await store.getRun(run.id);
    expect(recovered).toMatchObject({ status: 'completed', mode: 'background' });
    await store.close();
  });
});
