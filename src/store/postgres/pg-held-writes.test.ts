import { describe, expect, it } from 'vitest';
import type { RunEventRecord } from '../records.ts';
import { addRunEvents } from '../core/event-rows.ts';
import type { HeldEvent } from '../core/held-rows.ts';
import {
  createHeldSegment,
  createStatementNames,
  maxEventRowChars,
  packedEventArrays,
  pgArrayLiteral,
  renumberHeld,
  segmentStatement,
} from './pg-held-writes.ts';

function row(key: string, seq: number, text = 'x'): HeldEvent {
  return { key, seq, at: '2026-01-01T00:00:00.000Z', type: 'activity', data: text, record: { seq } };
}

describe('held writes of the Postgres store', () => {
  it('writes nothing for an empty segment', () => {
    expect(segmentStatement([createHeldSegment()])).toBeNull();
  });

  it('writes events and messages of a segment in one statement, one array per column', () => {
    const segment = createHeldSegment();
    segment.events.hold(row('run_1', 1));
    segment.events.hold(row('run_2', 4));
    segment.messages.hold({ key: 'ses_1', seq: 2, role: 'user', content: '"hi"', created_at: '2026-01-01T00:00:00.000Z', record: { seq: 2 } });
    const statement = segmentStatement([segment])!;
    expect(statement.text).toMatch(/^WITH w0 AS \(INSERT INTO messages .*\$7::text\[\].*\) INSERT INTO run_event_rows .*unnest\(\$1::text\[\], \$2::int\[\]/);
    expect(statement.values.slice(0, 2)).toEqual([
      ['run_1', 'run_2'],
      [1, 4],
    ]);
    expect(statement.values[5]).toEqual([null, null]);
    expect(statement.values.slice(6, 8)).toEqual([['ses_1'], [2]]);
  });

  it("packs a run's consecutive held events into one row, as the SQLite store's schema 6 reads them, and an event alone as before", () => {
    const first = createHeldSegment();
    const second = createHeldSegment();
    for (const held of [row('run_1', 3, '{"a":1}'), row('run_2', 1), row('run_1', 4, '{"b":"\\"q\\""}')]) first.events.hold(held);
    second.events.hold(row('run_1', 5, '{}'));
    const [keys, seqs, at, types, data, lastSeqs] = packedEventArrays([...first.events.of('run_1')!, ...second.events.all(), ...first.events.of('run_2')!]);
    expect({ keys, seqs, at, types, lastSeqs }).toEqual({
      keys: ['run_1', 'run_2'],
      seqs: [3, 1],
      at: ['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'],
      types: ['events', 'activity'],
      lastSeqs: [5, null],
    });
    expect(data[1]).toBe('x');
    const events: RunEventRecord[] = [];
    addRunEvents(events, 'run_1', [3, at[0] as string, types[0] as string, data[0] as string, 5], 3);
    expect(events).toEqual([
      { run_id: 'run_1', seq: 4, at: '2026-01-01T00:00:00.000Z', type: 'activity', data: { b: '"q"' } },
      { run_id: 'run_1', seq: 5, at: '2026-01-01T00:00:00.000Z', type: 'activity', data: {} },
    ]);
  });

  it('starts a new row of events past about maxEventRowChars characters, and at a gap in the seqs', () => {
    const big = 'y'.repeat(maxEventRowChars / 2);
    const rows = [row('run_1', 1, `"${big}"`), row('run_1', 2, `"${big}"`), row('run_1', 3, '1'), row('run_1', 5, '2'), row('run_1', 6, '3')];
    const [, seqs, , types, , lastSeqs] = packedEventArrays(rows);
    expect(seqs).toEqual([1, 2, 5]);
    expect(lastSeqs).toEqual([null, 3, 6]);
    expect(types).toEqual(['activity', 'events', 'events']);
  });

  it('groups changed runs by the columns they set, each run once, and adds session tokens to the stored ones', () => {
    const segment = createHeldSegment();
    segment.runs.set(
      'run_1',
      new Map<string, unknown>([
        ['turns', 2],
        ['usage', '{}'],
      ]),
    );
    segment.runs.set(
      'run_2',
      new Map<string, unknown>([
        ['usage', '{"a":1}'],
        ['turns', 3],
      ]),
    );
    segment.runs.set('run_3', new Map<string, unknown>([['last_activity', null]]));
    segment.sessions.set('ses_1', { fields: new Map([['status', 'idle']]), input_tokens: 10, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 0 });
    const { text, values } = segmentStatement([segment])!;
    expect(text.match(/UPDATE runs SET/g)).toHaveLength(2);
    expect(text).toContain('UPDATE runs SET turns = held.turns, usage = held.usage FROM unnest($1::text[], $2::int[], $3::text[])');
    expect(text).toContain('input_tokens = sessions.input_tokens + held.input_tokens');
    expect(values.slice(0, 3)).toEqual([
      ['run_1', 'run_2'],
      [2, 3],
      ['{}', '{"a":1}'],
    ]);
    expect(values).toContainEqual([10]);
  });

  it('writes several segments in one statement: later fields win, tokens add up, a rewrite of an earlier held message becomes its content', () => {
    const first = createHeldSegment();
    const second = createHeldSegment();
    first.messages.hold({ key: 'ses_1', seq: 1, role: 'assistant', content: '"old"', created_at: '2026-01-01T00:00:00.000Z', record: { seq: 1 } });
    first.runs.set('run_1', new Map<string, unknown>([['turns', 1]]));
    first.sessions.set('ses_1', { fields: new Map(), input_tokens: 5, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0 });
    second.contents.set('ses_1\u00001', ['ses_1', 1, '"new"']);
    second.contents.set('ses_1\u00000', ['ses_1', 0, '"stored"']);
    second.runs.set('run_1', new Map<string, unknown>([['turns', 2]]));
    second.sessions.set('ses_1', { fields: new Map(), input_tokens: 7, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 0 });
    const { text, values } = segmentStatement([first, second])!;
    expect(values.slice(0, 5)).toEqual([['ses_1'], [1], ['assistant'], ['"new"'], ['2026-01-01T00:00:00.000Z']]);
    expect(text.match(/UPDATE messages SET content/g)).toHaveLength(1);
    expect(values.slice(5, 8)).toEqual([['ses_1'], [0], ['"stored"']]);
    expect(values.slice(8, 10)).toEqual([['run_1'], [2]]);
    expect(values.slice(10)).toEqual([['ses_1'], [12], [3]]);
  });

  it('moves the held rows of a key past the seqs another process stored, keeping their order, and tells the callers', () => {
    const first = createHeldSegment();
    const second = createHeldSegment();
    first.events.hold(row('run_1', 3));
    first.events.hold(row('run_2', 7));
    second.events.hold(row('run_1', 4));
    const last = renumberHeld(
      [first, second],
      'events',
      new Map([
        ['run_1', 5],
        ['run_2', 6],
      ]),
    );
    expect(first.events.all().map((held) => [held.key, held.seq, held.record!.seq])).toEqual([
      ['run_1', 6, 6],
      ['run_2', 7, 7],
    ]);
    expect(second.events.of('run_1')![0].seq).toBe(7);
    expect([...last]).toEqual([['run_1', 7]]);
  });

  it('sends arrays as Postgres array literals, quoting and escaping every string', () => {
    expect(pgArrayLiteral(['a', 'b"c', 'd\\e', null, '', '{}', 'NULL', 'a,b'])).toBe('{"a","b\\"c","d\\\\e",NULL,"","{}","NULL","a,b"}');
    expect(pgArrayLiteral([1, null, 3])).toBe('{1,NULL,3}');
    expect(createStatementNames()({ text: 'SELECT $1, $2', values: [['x'], 'y'] }).values).toEqual(['{"x"}', 'y']);
  });

  it('names each statement text once, and stops naming past its limit', () => {
    const name = createStatementNames(2);
    expect(name({ text: 'SELECT 1', values: [] }).name).toBe(name({ text: 'SELECT 1', values: [1] }).name);
    expect(name({ text: 'SELECT 2', values: [] }).name).not.toBe(name({ text: 'SELECT 1', values: [] }).name);
    expect(name({ text: 'SELECT 3', values: [] }).name).toBeUndefined();
  });
});
