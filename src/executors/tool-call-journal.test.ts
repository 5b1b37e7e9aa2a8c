import { describe, expect, it } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { sessionFixture } from '../store/store-fixtures.ts';
import type { Store } from '../store/store.ts';
import { defineTool } from '../tools/define-tool.ts';
import { z } from 'zod';
import { createToolCallJournal, pendingCallKey } from './tool-call-journal.ts';

const now = () => '2025-01-01T00:00:05.000Z';
const readTool = defineTool({ name: 'look', description: 'Looks.', inputSchema: z.object({}), execute: () => 'ok' });
const writeTool = defineTool({ name: 'touch', description: 'Touches.', risk: 'write', inputSchema: z.object({}), execute: () => 'ok' });

/** A store that counts the writes of message rows and the flushes. */
function counted(store: Store): { store: Store; writes: string[] } {
  const writes: string[] = [];
  return {
    writes,
    store: {
      ...store,
      appendMessages: (messages) => (writes.push('append'), store.appendMessages(messages)),
      updateMessageContent: (sessionId, seq, content) => (
        writes.push(`update ${(content as unknown[]).length}`), store.updateMessageContent(sessionId, seq, content)
      ),
      flush: () => (writes.push('flush'), store.flush()),
    },
  };
}

describe('createToolCallJournal', () => {
  it('stores the calls a step starts together in one write, not a rewrite of the message per call', async () => {
    const inner = createSqliteStore({ path: ':memory:' });
    await inner.createSession(sessionFixture({ id: 'ses_1' }));
    const { store, writes } = counted(inner);
    const journal = createToolCallJournal({ store, sessionId: 'ses_1', ownerId: 'owner_1', now });
    const recorded = Array.from({ length: 50 }, (_, index) => journal.record({ toolCallId: `call_${index}`, toolName: 'look', input: { index } }, readTool));
    await Promise.all(recorded);
    expect(writes).toEqual(['append']);
    const [message] = await inner.listMessages('ses_1');
    const parts = message.content as Array<{ toolCallId: string; providerOptions: Record<string, unknown> }>;
    expect(parts.map((part) => part.toolCallId)).toEqual(Array.from({ length: 50 }, (_, index) => `call_${index}`));
    expect(parts.every((part) => (part.providerOptions[pendingCallKey] as { pending_owner: string }).pending_owner === 'owner_1')).toBe(true);

    const { append, rewrite } = await journal.endStep([
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          ...parts.map((part) => ({ type: 'tool-call' as const, toolCallId: part.toolCallId, toolName: 'look', input: {} })),
        ],
      },
      { role: 'tool', content: [] },
    ]);
    expect(append).toHaveLength(1);
    expect(rewrite?.seq).toBe(message.seq);
    expect((rewrite?.content as unknown[]).length).toBe(51);
    await inner.close();
  });

  it('appends a step’s calls message through appendCalls when given, and rewrites it in the store', async () => {
    const inner = createSqliteStore({ path: ':memory:' });
    await inner.createSession(sessionFixture({ id: 'ses_1' }));
    const { store, writes } = counted(inner);
    const given: unknown[] = [];
    const journal = createToolCallJournal({
      store,
      sessionId: 'ses_1',
      ownerId: 'owner_1',
      now,
      appendCalls: async (message) => {
        given.push(message.content);
        return (await inner.appendMessages([message]))[0];
      },
    });
    await journal.record({ toolCallId: 'call_1', toolName: 'look', input: {} }, readTool);
    const second = journal.record({ toolCallId: 'call_2', toolName: 'look', input: {} }, readTool);
    await second;
    expect(given).toHaveLength(1);
    expect(writes).toEqual(['update 2']);
    const [message] = await inner.listMessages('ses_1');
    expect((message.content as unknown[]).length).toBe(2);
    await inner.close();
  });

  it('runs a call once the write holding it is done, and a call that can act outside the store once it is committed', async () => {
    const inner = createSqliteStore({ path: ':memory:' });
    await inner.createSession(sessionFixture({ id: 'ses_1' }));
    const { store, writes } = counted(inner);
    const journal = createToolCallJournal({ store, sessionId: 'ses_1', ownerId: 'owner_1', now });
    await journal.record({ toolCallId: 'call_1', toolName: 'look', input: {} }, readTool);
    expect(writes).toEqual(['append']);
    // Arrives after the first write: a write of its own, with the commit a write tool waits for.
    const second = journal.record({ toolCallId: 'call_2', toolName: 'touch', input: {} }, writeTool);
    const third = journal.record({ toolCallId: 'call_3', toolName: 'look', input: {} }, readTool);
    await Promise.all([second, third]);
    expect(writes).toEqual(['append', 'update 3', 'flush']);
    await inner.close();
  });

  it('fails every call of a write the store refused, before any of them runs', async () => {
    const inner = createSqliteStore({ path: ':memory:' });
    await inner.createSession(sessionFixture({ id: 'ses_1' }));
    const store: Store = { ...inner, appendMessages: () => Promise.reject(new Error('disk full')) };
    const journal = createToolCallJournal({ store, sessionId: 'ses_1', ownerId: 'owner_1', now });
    const results = await Promise.allSettled([
      journal.record({ toolCallId: 'call_1', toolName: 'look', input: {} }, readTool),
      journal.record({ toolCallId: 'call_2', toolName: 'look', input: {} }, readTool),
    ]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    await inner.close();
  });

  it('stores unmarked calls for a run and writes nothing at the step end when they already are its message', async () => {
    const inner = createSqliteStore({ path: ':memory:' });
    await inner.createSession(sessionFixture({ id: 'ses_1' }));
    const { store, writes } = counted(inner);
    const journal = createToolCallJournal({ store, sessionId: 'ses_1', ownerId: 'owner_1', markCalls: false, now });
    await Promise.all([
      journal.record({ toolCallId: 'call_1', toolName: 'look', input: { path: 'a' } }, readTool),
      journal.record({ toolCallId: 'call_2', toolName: 'look', input: {} }, readTool),
    ]);
    const [message] = await inner.listMessages('ses_1');
    expect(JSON.stringify(message.content)).not.toContain(pendingCallKey);
    const calls = [
      { type: 'tool-call' as const, toolCallId: 'call_1', toolName: 'look', input: { path: 'a' }, providerExecuted: undefined, providerOptions: undefined },
      { type: 'tool-call' as const, toolCallId: 'call_2', toolName: 'look', input: {} },
    ];
    const step = await journal.endStep([
      { role: 'assistant', content: calls },
      { role: 'tool', content: [] },
    ]);
    expect(step.rewrite).toBeNull();
    expect(step.kept).toEqual(message);
    expect(step.append).toHaveLength(1);
    expect(writes).toEqual(['append']);

    // A step with text besides its calls is rewritten as its whole message.
    await journal.record({ toolCallId: 'call_3', toolName: 'look', input: {} }, readTool);
    const next = await journal.endStep([
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool-call', toolCallId: 'call_3', toolName: 'look', input: {} },
        ],
      },
    ]);
    expect(next.kept).toBeUndefined();
    expect((next.rewrite?.content as Array<{ type: string }>).map((part) => part.type)).toEqual(['text', 'tool-call']);
    // So is one whose call the model gave a different input than the stored one.
    await journal.record({ toolCallId: 'call_4', toolName: 'look', input: { path: 'b' } }, readTool);
    expect(
      (await journal.endStep([{ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_4', toolName: 'look', input: { path: 'c' } }] }])).rewrite,
    ).not.toBeNull();
    await inner.close();
  });

  it('answers the unmarked calls of an unfinished step without rewriting them', async () => {
    const inner = createSqliteStore({ path: ':memory:' });
    await inner.createSession(sessionFixture({ id: 'ses_1' }));
    const { store, writes } = counted(inner);
    const journal = createToolCallJournal({ store, sessionId: 'ses_1', ownerId: 'owner_1', markCalls: false, now });
    await journal.record({ toolCallId: 'call_1', toolName: 'look', input: {} }, readTool);
    journal.settled?.('call_1', { ok: true, output: 'seen' });
    const finished = await journal.finish();
    expect(finished.map((message) => message.role)).toEqual(['assistant', 'tool']);
    expect(writes).toEqual(['append', 'append']);
    const stored = await inner.listMessages('ses_1');
    expect(stored[1].content).toEqual([{ type: 'tool-result', toolCallId: 'call_1', toolName: 'look', output: { type: 'text', value: 'seen' } }]);
    await inner.close();
  });
});
