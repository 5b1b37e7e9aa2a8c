import { describe, expect, it } from 'vitest';
import { runFixture } from '../store/store-fixtures.ts';
import type { MessageRecord, SessionRecord } from '../store/records.ts';
import { maxTitleChars, sessionState, sessionTitle, viewRuns } from './session-views.ts';
import { sessionStateLabel } from '../sessions/session-state.ts';

const now = '2026-01-01T00:10:00.000Z';
const session: SessionRecord = {
  id: 'ses_1',
  agent: 'main',
  model: 'scripted',
  created_at: now,
  status: 'idle',
  parent_run_id: null,
  auto_resumes: 0,
  user_canceled_at: null,
};

function message(seq: number, role: MessageRecord['role'], content: unknown): MessageRecord {
  return { session_id: 'ses_1', seq, role, content, created_at: now };
}

describe('sessionState', () => {
  it('reads an idle primary agent with working runs as waiting on them, counting queued and running runs only', () => {
    const runs = viewRuns(
      [
        runFixture({ id: 'run_a', status: 'running', lease_owner: 'here', lease_expires_at: '2026-01-01T01:00:00.000Z' }),
        runFixture({ id: 'run_b', status: 'queued', lease_owner: 'here', lease_expires_at: '2026-01-01T01:00:00.000Z' }),
        runFixture({ id: 'run_c', status: 'completed' }),
      ],
      now,
    );
    expect(sessionState(session, runs, 0)).toEqual({ kind: 'waiting_on_runs', runs: 2 });
  });

  it('puts an ask waiting for a person before everything else, and the primary turn before runs', () => {
    const runs = viewRuns([runFixture({ id: 'run_a', status: 'queued', lease_owner: 'here', lease_expires_at: '2026-01-01T01:00:00.000Z' })], now);
    expect(sessionState({ ...session, status: 'running' }, runs, 2)).toEqual({ kind: 'awaiting_approval', approvals: 2 });
    expect(sessionState({ ...session, status: 'running' }, runs, 0)).toEqual({ kind: 'running' });
  });

  it('does not wait on a run whose process died, and keeps failed and canceled sessions as they are', () => {
    const orphan = viewRuns([runFixture({ id: 'run_a', status: 'running', lease_owner: 'gone-host:1:x', lease_expires_at: '2026-01-01T00:00:00.000Z' })], now);
    expect(orphan[0].owner_gone).toBe(true);
    expect(sessionState(session, orphan, 0)).toEqual({ kind: 'idle' });
    expect(sessionState({ ...session, status: 'failed' }, [], 0)).toEqual({ kind: 'failed' });
    expect(sessionState({ ...session, status: 'canceled' }, [], 0)).toEqual({ kind: 'canceled' });
  });

  it('reads a session a person stopped while no turn ran (stored idle) as canceled, once its runs have ended', () => {
    const stopped = { ...session, user_canceled_at: '2026-01-01T00:05:00.000Z' };
    expect(sessionState(stopped, [], 0)).toEqual({ kind: 'canceled' });
    const ending = viewRuns([runFixture({ id: 'run_a', status: 'running', lease_owner: 'here', lease_expires_at: '2026-01-01T01:00:00.000Z' })], now);
    expect(sessionState(stopped, ending, 0)).toEqual({ kind: 'waiting_on_runs', runs: 1 });
    expect(sessionState({ ...stopped, status: 'running' }, [], 0)).toEqual({ kind: 'running' });
  });
});

describe('sessionStateLabel', () => {
  it('is the kind, with what it waits on', () => {
    expect(sessionStateLabel({ kind: 'awaiting_approval', approvals: 2 })).toBe('awaiting_approval(2)');
    expect(sessionStateLabel({ kind: 'waiting_on_runs', runs: 3 })).toBe('waiting_on_runs(3)');
    expect(sessionStateLabel({ kind: 'canceled' })).toBe('canceled');
  });
});

describe('sessionTitle', () => {
  it('is the first user message on one line, from text parts, skipping the system prompt', () => {
    const messages = [
      message(1, 'system', 'You are main.'),
      message(2, 'user', [
        { type: 'text', text: 'Fix  the\nbuild' },
        { type: 'image', image: 'x' },
      ]),
      message(3, 'user', 'later'),
    ];
    expect(sessionTitle(messages)).toBe('Fix the build');
  });

  it('cuts a long prompt with an ellipsis, never inside a surrogate pair, and is null without a prompt', () => {
    const long = `${'😀'.repeat(maxTitleChars)}tail`;
    const title = sessionTitle([message(1, 'user', long)])!;
    expect([...title]).toHaveLength(maxTitleChars);
    expect(title.endsWith('😀…')).toBe(true);
    expect(sessionTitle([message(1, 'assistant', 'hi')])).toBeNull();
    expect(sessionTitle([message(1, 'user', '   ')])).toBeNull();
  });
});
