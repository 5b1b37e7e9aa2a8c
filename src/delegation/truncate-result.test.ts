import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutAtWordBoundary, truncateResult } from './truncate-result.ts';

describe('truncateResult', () => {
  it('leaves short text alone', () => {
    expect(truncateResult('short', { maxChars: 10 })).toEqual({ text: 'short', truncated: false, originalLength: 5, omitted: 0 });
  });

  it('keeps about 65% head and 35% tail, cut at white space, with the true omitted count', () => {
    const words = Array.from({ length: 2000 }, (_, index) => `word${index}`).join(' ');
    const result = truncateResult(words, { maxChars: 1000 });
    expect(result.truncated).toBe(true);
    const match = /\[\.\.\.(\d+) characters omitted\.\.\.\]/.exec(result.text);
    expect(match).not.toBeNull();
    const [head, tail] = result.text.split(match![0]);
    expect(head.trim().length + tail.trim().length + Number(match![1])).toBeLessThanOrEqual(words.length);
    expect(words.startsWith(head.trim())).toBe(true);
    expect(words.endsWith(tail.trim())).toBe(true);
    expect(head.trim().length).toBeGreaterThan(500);
    expect(tail.trim().length).toBeGreaterThan(250);
    expect(tail.trim().length).toBeLessThan(head.trim().length);
  });

  it('never splits a surrogate pair and reports the original length', () => {
    const piece = fc.constantFrom('😀', '𝒳', 'a', ' ', 'é', '\n');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 400 }), fc.integer({ min: 20, max: 200 }), (pieces, maxChars) => {
        const text = pieces.join('');
        const result = truncateResult(text, { maxChars });
        expect(result.originalLength).toBe(text.length);
        if (!result.truncated) {
          expect(result.text).toBe(text);
          return;
        }
        const marker = `\n\n[...${result.omitted} characters omitted...]\n\n`;
        const parts = result.text.split(marker);
        expect(parts).toHaveLength(2);
        for (const part of parts) expect(part.isWellFormed()).toBe(true);
        expect(result.omitted).toBeGreaterThan(0);
        expect(parts[0].length + parts[1].length + result.omitted).toBeLessThanOrEqual(text.length);
      }),
    );
  });
});

describe('cutAtWordBoundary', () => {
  it('cuts at a word boundary and marks the cut', () => {
    expect(cutAtWordBoundary('alpha beta gamma delta', 12)).toBe('alpha beta …');
    expect(cutAtWordBoundary('short', 12)).toBe('short');
  });
});
