import { describe, expect, it } from 'vitest';
import type { CadreEvent } from '../runs/run-bus.ts';
import type { RunRecord } from '../store/records.ts';
import { runFixture } from '../store/store-fixtures.ts';
import { createLiveView, renderRunLine } from './live-view.ts';
import { shortRunId } from './run-lines.ts';

const now = '2025-01-01T00:00:13.000Z';
const running = runFixture({ status: 'running', started_at: '2025-01-01T00:00:01.000Z', last_activity: 'read_file src/store/store.ts' });

describe('renderRunLine', () => {
  it('shows status, agent, description, elapsed time and activity of an active run', () => {
    expect(renderRunLine(running, now)).toBe('⠋ running   researcher  1  Find the facts  12s  read_file src/store/store.ts');
  });

  it('turns the spinner with the clock', () => {
    expect(renderRunLine(running, '2025-01-01T00:00:13.100Z').startsWith('⠙ running')).toBe(true);
  });

  it('shows a queued run without repeating its status as activity', () => {
    expect(renderRunLine(runFixture({ activity: { kind: 'queued' } }), now)).toBe('· queued    researcher  1  Find the facts  12s');
  });

  it('shows what a finished run came to: its result, its error, or its partial result', () => {
    const ended = { ...running, ended_at: '2025-01-01T00:00:04.000Z' };
    const completed: RunRecord = { ...ended, status: 'completed', result: { text: 'The store keeps runs.\nMore.', truncated: false, original_length: 27 } };
    expect(renderRunLine(completed, now)).toBe('✓ completed researcher  1  Find the facts  3s  The store keeps runs. More.');
    const failed: RunRecord = { ...ended, status: 'failed', error: { kind: 'model_error', message: 'HTTP 500' } };
    expect(renderRunLine(failed, now)).toBe('✗ failed    researcher  1  Find the facts  3s  model_error: HTTP 500');
    const canceled: RunRecord = { ...ended, status: 'canceled_by_user', partial_result: 'Halfway' };
    expect(renderRunLine(canceled, now)).toBe('■ canceled_by_user researcher  1  Find the facts  3s  partial: Halfway');
  });

  it('keeps activity to 80 characters and cuts the line to the width', () => {
    const long = { ...running, last_activity: 'x'.repeat(200), description: 'd'.repeat(100) };
    const line = renderRunLine(long, now);
    expect(line.split('  ').at(-1)).toHaveLength(80);
    expect(line).toContain(`  ${'d'.repeat(47)}…  `);
    expect(renderRunLine(long, now, { width: 70 }).length).toBeLessThanOrEqual(70);
  });

  it('colours only when asked', () => {
    expect(renderRunLine(running, now)).not.toContain('\u001B[');
    expect(renderRunLine(running, now, { color: true })).toContain('\u001B[');
  });

  it("shows the agent's name in the colour its file names", () => {
    const purple = renderRunLine(running, now, { color: true, agentColor: { hex: '#8e4ec6', ansi: 'magenta' } });
    expect(purple).toContain('\u001B[35mresearcher');
    const hex = renderRunLine(running, now, { color: true, agentColor: { hex: '#00aa00', ansi: null } });
    expect(hex).toContain('\u001B[38;2;0;170;0mresearcher');
    expect(renderRunLine(running, now, { agentColor: { hex: '#8e4ec6', ansi: 'magenta' } })).not.toContain('\u001B[');
  });
});

describe('createLiveView', () => {
  function terminal() {
    const written: string[] = [];
    return { written, stream: { isTTY: true, columns: 100, rows: 20, write: (text: string) => written.push(text) > 0 } };
  }

  it('streams the answer, shows active runs, and leaves one summary line per finished run', () => {
    const stdout = terminal();
    const stderr = terminal();
    const view = createLiveView({ stdout: stdout.stream, stderr: stderr.stream, sessionId: 'ses_1', color: false, now: () => now, frameIntervalMs: 10_000 });
    view.event({ type: 'text-delta', session_id: 'ses_1', text: 'Delegating now.' });
    const queued = runFixture({ status: 'queued' });
    view.event({ type: 'run-event', run: queued, event: { run_id: queued.id, seq: 1, at: now, type: 'run-queued', data: {} } });
    const started = { ...running };
    const runEvent = (run: RunRecord, type: 'run-start' | 'run-end'): CadreEvent => ({
      type: 'run-event',
      run,
      event: { run_id: run.id, seq: 2, at: now, type, data: {} },
    });
    view.event(runEvent(started, 'run-start'));
    view.notice('Stopping...');
    const ended: RunRecord = {
      ...started,
      status: 'completed',
      ended_at: '2025-01-01T00:00:04.000Z',
      result: { text: 'Found it.', truncated: false, original_length: 9 },
    };
    view.event(runEvent(ended, 'run-end'));
    view.event({
      type: 'message',
      message: { session_id: 'ses_1', seq: 3, role: 'assistant', content: [{ type: 'text', text: 'All done.' }], created_at: now },
    });
    view.finish({ sessionId: 'ses_1', status: 'completed', text: 'All done.' });
    const screen = stdout.written.join('');
    expect(screen).toContain('Delegating now.');
    expect(screen).toContain('running   researcher  1  Find the facts');
    expect(screen).toContain('✓ completed researcher  1  Find the facts  3s  Found it.\n');
    expect(screen.match(/All done\./g)).toHaveLength(1);
    expect(stderr.written.join('')).toContain('cadre export ses_1 --format markdown');
  });

  it("says each failed tool call of the primary agent once, on stderr, and not a subagent's or a successful one", () => {
    const stdout = terminal();
    const stderr = terminal();
    const view = createLiveView({ stdout: stdout.stream, stderr: stderr.stream, sessionId: 'ses_1', color: false, now: () => now, frameIntervalMs: 10_000 });
    const results = (session_id: string, seq: number, output: unknown): CadreEvent => ({
      type: 'message',
      message: { session_id, seq, role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${seq}`, toolName: 'agent', output }], created_at: now },
    });
    const failed = results('ses_1', 2, { type: 'error-text', value: "Unknown agent 'researcher'. Agents: scout\nmore" });
    view.event(failed);
    view.event(failed);
    view.event(results('ses_1', 3, { type: 'text', value: 'fine' }));
    view.event(results('ses_child', 4, { type: 'error-text', value: 'a subagent failure' }));
    expect(stderr.written.join('')).toBe("agent failed: Unknown agent 'researcher'. Agents: scout\n");
    expect(stdout.written.join('')).not.toContain('failed');
  });

  it('prints the final answer last, even when it streamed before run lines were printed under it', () => {
    const stdout = terminal();
    const stderr = terminal();
    const view = createLiveView({ stdout: stdout.stream, stderr: stderr.stream, sessionId: 'ses_1', color: false, now: () => now, frameIntervalMs: 10_000 });
    view.event({
      type: 'message',
      message: { session_id: 'ses_1', seq: 3, role: 'assistant', content: [{ type: 'text', text: 'The answer.' }], created_at: now },
    });
    const ended: RunRecord = {
      ...running,
      status: 'completed',
      ended_at: '2025-01-01T00:00:04.000Z',
      result: { text: 'Late run.', truncated: false, original_length: 9 },
    };
    view.event({ type: 'run-event', run: ended, event: { run_id: ended.id, seq: 2, at: now, type: 'run-end', data: {} } });
    view.finish({ sessionId: 'ses_1', status: 'completed', text: 'The answer.' });
    const screen = stdout.written.join('');
    expect(screen.lastIndexOf('The answer.')).toBeGreaterThan(screen.indexOf('Late run.'));
  });
});

describe('shortRunId', () => {
  it('is the last six characters of the id, without the prefix', () => {
    expect(shortRunId('run_01JD8X2Q7W3NB5K2M4P6R8T0V1')).toBe('R8T0V1');
    expect(shortRunId('run_1')).toBe('1');
  });
});
