import { describe, expect, it } from 'vitest';
import { runFixture } from '../store-fixtures.ts';
import { createKnownRuns } from './known-runs.ts';
import { runFromRow, runToSql } from './run-rows.ts';

describe('runs a store knows', () => {
  it('keeps the row it inserted, then the row as its held patches left it', () => {
    const known = createKnownRuns();
    const run = runFixture({ id: 'run_1', status: 'running', lease_owner: 'host:1', activity: { kind: 'waiting_for_model' } });
    const values = runToSql(run) as unknown[];
    known.keep(runFromRow(values));
    expect(runToSql(known.get('run_1')!)).toEqual(values);
    known.patch(
      'run_1',
      Object.entries({ turns: 4, usage: { input_tokens: 9, output_tokens: 1 }, activity: { kind: 'text', text: 'done' }, context: undefined }),
    );
    known.renewed('host:1', '2030-01-01T00:00:00.000Z');
    const row = runToSql(known.get('run_1')!);
    expect(row).toEqual(
      runToSql({
        ...run,
        turns: 4,
        usage: { input_tokens: 9, output_tokens: 1 },
        activity: { kind: 'text', text: 'done' },
        lease_expires_at: '2030-01-01T00:00:00.000Z',
      }),
    );
  });

  it('hands out copies, forgets a run and any finished one, and keeps a bounded number', () => {
    const known = createKnownRuns({ limit: 2 });
    for (const id of ['run_1', 'run_2', 'run_3']) known.learn(runFixture({ id, status: 'running' }));
    known.learn(runFixture({ id: 'run_3', status: 'completed' }));
    expect(known.get('run_3')).toBeUndefined();
    expect(known.get('run_1')).toBeUndefined();
    known.get('run_2')!.turns = 99;
    expect(known.get('run_2')!.turns).not.toBe(99);
    known.forget('run_2');
    expect(known.get('run_2')).toBeUndefined();
  });

  it('keeps finished runs when asked, and hands a taken record over without a copy', () => {
    const known = createKnownRuns({ keepFinished: true });
    const run = runFixture({ id: 'run_1', status: 'completed' });
    known.keep(run);
    expect(known.has('run_1')).toBe(true);
    expect(known.take('run_1')).toBe(run);
    expect(known.has('run_1')).toBe(false);
  });
});
