import { describe, expect, it } from 'vitest';
import { clampActivity, describeToolCall, finalActivity, lastSentence, renderActivity } from './activity.ts';

describe('activity line', () => {
  it('names the tool and its main argument', () => {
    expect(describeToolCall('read_file', { path: 'src/a.ts' })).toBe('read_file src/a.ts');
    expect(describeToolCall('grep', { pattern: 'TODO', path: 'src' })).toBe('grep TODO in src');
    expect(describeToolCall('grep', { pattern: 'needle', path: '.' })).toBe('grep needle');
    expect(describeToolCall('list_files', { pattern: '*.ts' })).toBe('list_files *.ts');
    expect(describeToolCall('noop', {})).toBe('noop');
  });

  it('keeps the last sentence of streamed text and never passes 80 characters', () => {
    expect(lastSentence('First I looked. Then I found the bug in parser.ts.')).toBe('Then I found the bug in parser.ts.');
    expect(lastSentence('x'.repeat(300)).length).toBeLessThanOrEqual(80);
    expect(clampActivity('a\n b   c')).toBe('a b c');
  });

  it("starts a long sentence's tail at a whole word", () => {
    const sentence = 'The ledger in src/runs/run-ledger.ts is the one writer of run states and it checks every move it makes';
    const line = lastSentence(sentence);
    expect(line.startsWith('…')).toBe(true);
    expect(line.length).toBeLessThanOrEqual(80);
    expect(line.endsWith('every move it makes')).toBe(true);
    const firstWord = line.slice(1).split(' ')[0];
    expect(sentence.split(' ')).toContain(firstWord);
  });

  it('cuts a long line to 80 characters without splitting a surrogate pair', () => {
    for (const text of ['x'.repeat(200), `x${'😀'.repeat(100)}`, '😀'.repeat(100)]) {
      const line = clampActivity(text);
      expect(line.length).toBeLessThanOrEqual(80);
      expect(line.endsWith('…')).toBe(true);
      expect(line.isWellFormed()).toBe(true);
      expect(text.startsWith(line.slice(0, -1))).toBe(true);
    }
    expect(clampActivity('x'.repeat(200))).toHaveLength(80);
  });

  it('shows the final status with the start of the result', () => {
    const line = renderActivity(
      finalActivity({
        status: 'completed',
        result: { text: 'All good '.repeat(20), truncated: false, original_length: 180 },
        error: null,
        partial_result: null,
      }),
    );
    expect(line.startsWith('completed: All good')).toBe(true);
    expect(line.length).toBeLessThanOrEqual(80);
  });
});
