import { describe, expect, it } from 'vitest';
import { codeSpan, cutEnd, cutMiddle, fencedBlock, formatDuration, inlineText } from './markdown-text.ts';

describe('markdown text helpers', () => {
  it('fences text with a fence longer than any backtick run inside it', () => {
    expect(fencedBlock('plain')).toBe('```text\nplain\n```');
    expect(fencedBlock('a ```` b\n')).toBe('`````text\na ```` b\n`````');
  });

  it('makes code spans that survive backticks and newlines', () => {
    expect(codeSpan('a\nb')).toBe('`a b`');
    expect(codeSpan('x `y` z')).toBe('``x `y` z``');
    expect(codeSpan('`edge`')).toBe('`` `edge` ``');
  });

  it('escapes inline markup but keeps underscores inside words', () => {
    expect(inlineText('read_file *bold* _it_ <b> [x](y) `c` a|b ~s~ &amp;')).toBe(
      'read_file \\*bold\\* \\_it\\_ \\<b\\> \\[x\\](y) \\`c\\` a\\|b \\~s\\~ \\&amp;',
    );
  });

  it('cuts the end or the middle with the true number of omitted characters', () => {
    expect(cutEnd('abcdef', 10)).toBe('abcdef');
    expect(cutEnd('abcdefghij', 4)).toBe('abcd [... 6 characters omitted ...]');
    expect(cutMiddle('0123456789'.repeat(3), 20)).toBe('0123456789012\n[... 10 characters omitted ...]\n3456789');
  });

  it('never splits a surrogate pair', () => {
    const text = `${'a'.repeat(3)}😀${'b'.repeat(10)}`;
    expect(cutEnd(text, 4)).toBe(`aaa [... ${text.length - 3} characters omitted ...]`);
  });

  it('formats durations for people', () => {
    expect(formatDuration(400)).toBe('0.4s');
    expect(formatDuration(12_340)).toBe('12.3s');
    expect(formatDuration(125_000)).toBe('2m 05s');
    expect(formatDuration(3_720_000)).toBe('1h 02m');
  });
});
