import { describe, expect, it } from 'vitest';
import { ToolInputError } from '../tools/define-tool.ts';
import { describePage, pageResult } from './page-result.ts';

describe('pageResult', () => {
  it('pages a text in order and says where the next page starts', () => {
    const text = 'abcdefghij';
    const first = pageResult(text, { offset: 0, limit: 4 });
    expect(first).toEqual({ text: 'abcd', start: 0, end: 4, total: 10 });
    expect(describePage(first)).toBe('Characters 0–4 of 10 of the full result. Call agent_output with offset: 4 for the next page.');
    const last = pageResult(text, { offset: 8, limit: 4 });
    expect(last.text).toBe('ij');
    expect(describePage(last)).toBe('Characters 8–10 of 10 of the full result. This is the end.');
  });

  it('never splits a surrogate pair at either end of a page', () => {
    const text = 'ab😀cd';
    expect(pageResult(text, { offset: 0, limit: 3 }).text).toBe('ab');
    expect(pageResult(text, { offset: 3, limit: 3 }).text).toBe('😀c');
  });

  it('refuses an offset past the end, saying the valid range', () => {
    expect(() => pageResult('abc', { offset: 3, limit: 2 })).toThrow(ToolInputError);
    expect(() => pageResult('abc', { offset: 9, limit: 2 })).toThrow(
      'offset: 9 is past the end of the result, which has 3 characters; use an offset from 0 to 2.',
    );
  });
});
