import { describe, expect, it } from 'vitest';
import { eventFixture } from '../store-fixtures.ts';
import { addRunEvents } from './event-rows.ts';
import { createHeldRows, moveHeldPast, packEvents, type HeldEvent } from './held-rows.ts';
import { checkRunChange, whenValid } from './run-fields.ts';
import { createSeqCounters } from './seq-counters.ts';

const at = '2026-01-01T00:00:00.000Z';
const event = (key: string, seq: number, data = '{}'): HeldEvent => ({ key, seq, at, type: 'activity', data, record: { seq } });

describe('the write-behind core both stores share', () => {
  it('keeps held rows by key in order, finds them by seq, and lists those after a seq', () => {
    const held = createHeldRows<HeldEvent>();
    for (const row of [event('run_1', 1), event('run_2', 1), event('run_1', 2)]) held.hold(row);
    expect(held.all().map((row) => `${row.key}:${row.seq}`)).toEqual(['run_1:1', 'run_1:2', 'run_2:1']);
    expect(held.find('run_1', 2)?.seq).toBe(2);
    expect(held.after('run_1', 1).map((row) => row.seq)).toEqual([2]);
    held.clear();
    expect(held.size).toBe(0);
  });

  it("packs a run's consecutive events into rows that addRunEvents reads back, starting a new row at a gap, a new run or the size bound", () => {
    const rows = packEvents(
      [event('run_1', 1, '{"a":1}'), event('run_1', 2, '"x"'), event('run_1', 4), event('run_2', 5), event('run_2', 6, '"y"'.padEnd(50, 'y'))],
      100,
    );
    expect(rows.map(({ run_id, seq, last_seq, from }) => [run_id, seq, last_seq, from])).toEqual([
      ['run_1', 1, 2, 0],
      ['run_1', 4, null, 2],
      ['run_2', 5, null, 3],
      ['run_2', 6, null, 4],
    ]);
    const read: Parameters<typeof addRunEvents>[0] = [];
    addRunEvents(read, 'run_1', [rows[0].seq, rows[0].at, rows[0].type, rows[0].data, rows[0].last_seq], 0);
    expect(read.map((each) => [each.seq, each.data])).toEqual([
      [1, { a: 1 }],
      [2, 'x'],
    ]);
  });

  it('moves held rows past the seqs another process stored, records included, and leaves rows already past them', () => {
    const rows = [event('run_1', 3), event('run_1', 4)];
    expect(moveHeldPast(rows, 5)).toBe(7);
    expect(rows.map((row) => [row.seq, row.record!.seq])).toEqual([
      [6, 6],
      [7, 7],
    ]);
    expect(moveHeldPast(rows, 2)).toBe(7);
  });

  it('takes seqs from the counter, reads the last one of an unknown key once, and refuses an unknown key without a reader', () => {
    const seqs = createSeqCounters(2);
    expect(seqs.next('run_1', () => 41)).toBe(42);
    expect(seqs.next('run_1', () => 0)).toBe(43);
    seqs.learn('run_1', 40);
    expect(seqs.last('run_1')).toBe(43);
    expect(() => seqs.next('run_2')).toThrow(/No seq is known for 'run_2'/);
    seqs.learn('run_2', 0);
    seqs.learn('run_3', 0);
    expect(seqs.has('run_1')).toBe(false);
  });

  it('rejects a bad change before anything runs, and encodes a good one', async () => {
    let ran = false;
    const bad = whenValid(
      () => checkRunChange('run_1', { status: 'completed' } as never, []),
      async () => (ran = true),
    );
    await expect(bad).rejects.toThrow(/cannot change 'status'/);
    await expect(
      whenValid(
        () => checkRunChange('run_1', {}, [eventFixture('run_2', 'activity')]),
        async () => (ran = true),
      ),
    ).rejects.toThrow(/run 'run_2' was passed with run 'run_1'/);
    expect(ran).toBe(false);
    const good = await whenValid(
      () => checkRunChange('run_1', { turns: 2, activity: { kind: 'text', text: 'hi' } }, [eventFixture('run_1', 'activity')]),
      async (checked) => checked,
    );
    expect(good.fields.map(({ field, column }) => [field, column])).toEqual([
      ['activity', 'last_activity'],
      ['turns', 'turns'],
    ]);
    expect(good.data).toHaveLength(1);
  });
});
