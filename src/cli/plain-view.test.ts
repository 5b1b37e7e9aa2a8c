import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CadreEvent } from '../runs/run-bus.ts';
import type { RunEventType, RunRecord } from '../store/records.ts';
import { runFixture } from '../store/store-fixtures.ts';
import { createJsonView } from './json-view.ts';
import { createPlainView } from './plain-view.ts';

function stream() {
  const lines: string[] = [];
  return { lines, write: (text: string) => lines.push(text) > 0, text: () => lines.join('') };
}

function runEvent(run: RunRecord, type: RunEventType, data: Record<string, unknown> = {}): CadreEvent {
  return { type: 'run-event', run, event: { run_id: run.id, seq: 1, at: run.created_at, type, data } };
}

const now = () => '2025-01-01T00:00:13.000Z';
const started = runFixture({ status: 'running', started_at: '2025-01-01T00:00:01.000Z' });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('createPlainView', () => {
  it('logs start, activity at most every 2 s per run, and the end on stderr; the answer alone on stdout', () => {
    const stdout = stream();
    const stderr = stream();
    const view = createPlainView({ stdout, stderr, sessionId: 'ses_1', now });
    view.event(runEvent(runFixture(), 'run-queued'));
    view.event(runEvent(started, 'run-start'));
    view.event(runEvent(started, 'tool-call-start', { tool: 'read_file', label: 'read_file a.ts' }));
    view.event(runEvent(started, 'activity', { text: 'read_file b.ts' }));
    view.event(runEvent(started, 'activity', { text: 'read_file c.ts' }));
    vi.advanceTimersByTime(2_000);
    view.event(
      runEvent(
        { ...started, status: 'completed', ended_at: '2025-01-01T00:00:04.000Z', result: { text: 'Found it.', truncated: false, original_length: 9 } },
        'run-end',
      ),
    );
    view.event(runEvent(runFixture({ id: 'run_other', parent_session_id: 'ses_unrelated' }), 'run-start'));
    view.finish({ sessionId: 'ses_1', status: 'completed', text: 'The answer.' });
    expect(stderr.text()).toBe(
      [
        '[run_1 researcher] started: Find the facts',
        '[run_1 researcher] read_file a.ts',
        '[run_1 researcher] read_file c.ts',
        '[run_1 researcher] completed (3s): Found it.',
        '',
        'Session ses_1 (completed).',
        '  export:   cadre export ses_1 --format markdown',
        '  continue: cadre run --session ses_1 "..."',
        '',
      ].join('\n'),
    );
    expect(stdout.text()).toBe('The answer.\n');
  });

  it('writes each answer of the primary agent to stdout as it is given, then the stored ones it missed, never one twice', () => {
    const stdout = stream();
    const view = createPlainView({ stdout, stderr: stream(), sessionId: 'ses_1', now });
    const message = (session_id: string, seq: number, role: 'assistant' | 'user', content: unknown): CadreEvent => ({
      type: 'message',
      message: { session_id, seq, role, content, created_at: '2025-01-01T00:00:00.000Z' },
    });
    view.event(message('ses_1', 1, 'user', 'Start a run.'));
    view.event(
      message('ses_1', 2, 'assistant', [
        { type: 'text', text: 'Started it in the background.' },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'agent', input: {} },
      ]),
    );
    expect(stdout.text()).toBe('Started it in the background.\n');
    view.event(message('ses_child', 3, 'assistant', 'A subagent speaks.'));
    view.event(message('ses_1', 4, 'assistant', [{ type: 'tool-call', toolCallId: 'c2', toolName: 'agent', input: {} }]));
    view.event(message('ses_1', 6, 'assistant', 'The run is done.'));
    view.finish({
      sessionId: 'ses_1',
      status: 'completed',
      text: 'The run is done.',
      answers: [
        { seq: 2, text: 'Started it in the background.' },
        { seq: 5, text: 'Missed live.' },
        { seq: 6, text: 'The run is done.' },
      ],
    });
    expect(stdout.text()).toBe('Started it in the background.\nThe run is done.\nMissed live.\n');
  });

  it('leaves out the wait for the model by its kind, not its words: streamed text saying the same is shown', () => {
    const stderr = stream();
    const view = createPlainView({ stdout: stream(), stderr, sessionId: 'ses_1', now });
    view.event(runEvent(started, 'activity', { kind: 'waiting_for_model', text: 'waiting for model' }));
    vi.advanceTimersByTime(2_000);
    view.event(runEvent(started, 'activity', { kind: 'text', text: 'waiting for model' }));
    expect(stderr.text()).toBe('[run_1 researcher] waiting for model\n');
  });

  it('throttles activity on the clock it is given', () => {
    const stderr = stream();
    let clock = 50_000;
    const view = createPlainView({ stdout: stream(), stderr, sessionId: 'ses_1', now, nowMs: () => clock });
    view.event(runEvent(started, 'activity', { text: 'first' }));
    view.event(runEvent(started, 'activity', { text: 'second' }));
    expect(stderr.text()).toBe('[run_1 researcher] first\n');
    // 2 s passed on the given clock (none on the timers): the next line is printed at once.
    clock += 2_000;
    view.event(runEvent(started, 'activity', { text: 'third' }));
    expect(stderr.text()).toBe('[run_1 researcher] first\n[run_1 researcher] third\n');
  });

  it('drops pending activity of a run that ended', () => {
    const stderr = stream();
    const view = createPlainView({ stdout: stream(), stderr, sessionId: 'ses_1', now });
    view.event(runEvent(started, 'activity', { text: 'first' }));
    view.event(runEvent(started, 'activity', { text: 'second' }));
    view.event(runEvent({ ...started, status: 'failed', error: { kind: 'model_error', message: 'HTTP 400' } }, 'run-end'));
    vi.advanceTimersByTime(5_000);
    expect(stderr.text()).not.toContain('second');
    expect(stderr.text()).toContain('[run_1 researcher] failed (12s): model_error: HTTP 400');
  });
});

describe('createJsonView', () => {
  it('writes one JSON object per event, joins text deltas, and ends with session-end', () => {
    const stdout = stream();
    const view = createJsonView({ stdout, stderr: stream() });
    view.event({ type: 'text-delta', session_id: 'ses_1', text: 'Hel' });
    view.event({ type: 'text-delta', session_id: 'ses_1', text: 'lo' });
    view.event({ type: 'session-status', session_id: 'ses_1', status: 'idle' });
    view.finish({ sessionId: 'ses_1', status: 'failed', text: '', error: 'HTTP 400' });
    expect(stdout.lines.map((line) => JSON.parse(line))).toEqual([
      { type: 'text-delta', session_id: 'ses_1', text: 'Hello' },
      { type: 'session-status', session_id: 'ses_1', status: 'idle' },
      { type: 'session-end', session_id: 'ses_1', status: 'failed', text: '', error: 'HTTP 400' },
    ]);
  });
});
