import { describe, expect, it } from 'vitest';
import { createRunBus, type CadreEvent } from '../runs/run-bus.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { createSessionWriter } from './session-writer.ts';

describe('createSessionWriter', () => {
  it('makes an idle primary session and announces each status change it writes', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    const bus = createRunBus();
    const events: CadreEvent[] = [];
    bus.subscribe((event) => events.push(event));
    const writer = createSessionWriter({ store, bus });
    const made = await writer.create({ id: 'ses_a', agent: 'main', model: 'ollama:llama3', created_at: '2026-01-01T00:00:00.000Z' });
    expect(made).toEqual({
      id: 'ses_a',
      agent: 'main',
      model: 'ollama:llama3',
      created_at: '2026-01-01T00:00:00.000Z',
      status: 'idle',
      parent_run_id: null,
      auto_resumes: 0,
      user_canceled_at: null,
    });
    await writer.setStatus('ses_a', 'running');
    await writer.countAutoResume({ id: 'ses_a', auto_resumes: 0 });
    await writer.setStatus('ses_a', 'canceled', { user_canceled_at: '2026-01-01T00:00:01.000Z' });
    expect(await store.getSession('ses_a')).toMatchObject({ status: 'canceled', auto_resumes: 1, user_canceled_at: '2026-01-01T00:00:01.000Z' });
    await writer.allowAutoResume('ses_a');
    await writer.setModel('ses_a', 'ollama:qwen');
    expect(await store.getSession('ses_a')).toMatchObject({ model: 'ollama:qwen', auto_resumes: 0, user_canceled_at: null });
    expect(events).toEqual([
      { type: 'session-status', session_id: 'ses_a', status: 'running' },
      { type: 'session-status', session_id: 'ses_a', status: 'canceled' },
    ]);
    await store.close();
  });
});
