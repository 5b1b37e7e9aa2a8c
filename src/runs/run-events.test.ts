import { describe, expect, it } from 'vitest';
import type { RunEventRecord } from '../store/records.ts';
import { describeRunEvent, describeStoredRunEvent, parseRunEvent, RunEventDataError } from './run-events.ts';

const event = (type: RunEventRecord['type'], data: Record<string, unknown>): RunEventRecord => ({
  run_id: 'run_1',
  seq: 3,
  at: '2026-01-01T00:00:00.000Z',
  type,
  data,
});

describe('run events as one typed union', () => {
  it('types each event by its type, keeping fields a newer writer added', () => {
    const parsed = parseRunEvent(event('tool-call-start', { tool: 'read_file', label: 'read_file src/a.ts', extra: 1 }));
    expect(parsed.type === 'tool-call-start' && parsed.data.label).toBe('read_file src/a.ts');
    expect(parsed.data).toMatchObject({ extra: 1 });
    expect(parseRunEvent(event('run-end', { status: 'completed', reason: 'model' })).data).toEqual({ status: 'completed', reason: 'model' });
    expect(parseRunEvent(event('activity', { text: 'waiting for model' })).data).toEqual({ text: 'waiting for model' });
  });

  it('refuses an event whose data does not fit its type, naming the run, the event and the field', () => {
    expect(() => parseRunEvent(event('tool-call-start', { tool: 'read_file' }))).toThrow(RunEventDataError);
    expect(() => parseRunEvent(event('tool-call-start', { tool: 'read_file' }))).toThrow(
      /Event 3 \(tool-call-start\) of run run_1 does not fit its type: data\.label/,
    );
    expect(() => parseRunEvent(event('run-end', { status: 'done' }))).toThrow(/data\.status/);
    expect(() => parseRunEvent(event('no-such-type' as RunEventRecord['type'], {}))).toThrow(RunEventDataError);
  });

  it('describes an event from its typed fields, and one that does not fit by its fields as they are', () => {
    expect(describeRunEvent(parseRunEvent(event('tool-call-end', { tool: 'bash', ok: false })))).toBe('bash failed');
    expect(describeRunEvent(parseRunEvent(event('approval-resolve', { approval_id: 'apr_1', decision: 'denied', by: 'timeout' })))).toBe('denied by timeout');
    expect(describeStoredRunEvent(event('run-end', { status: 'failed' }))).toBe('failed');
    expect(describeStoredRunEvent(event('tool-call-start', { tool: 'grep', pattern: { a: 1 } }))).toBe('tool=grep pattern={"a":1}');
  });
});
