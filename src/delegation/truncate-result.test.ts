import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutAtWordBoundary, truncateResult } from './truncate-result.ts';

/** The text with the characters at `indexes` replaced by spaces. */
function spacedAt(text: string, ...indexes: number[]): string {
  const characters = [...text];
  for (const index of indexes) characters[index] = ' ';
  return characters.join('');
}

const marker = (omitted: number) => `\n\n[...${omitted} characters omitted...]\n\n`;

describe('truncateResult', () => {
  it('leaves text of at most maxChars alone', () => {
    expect(truncateResult('short', { maxChars: 10 })).toEqual({ text: 'short', truncated: false, originalLength: 5, omitted: 0 });
    expect(truncateResult('x'.repeat(10), { maxChars: 10 })).toEqual({ text: 'x'.repeat(10), truncated: false, originalLength: 10, omitted: 0 });
  });

  it('cuts at 8000 characters by default', () => {
    expect(truncateResult('x'.repeat(8000)).truncated).toBe(false);
    const result = truncateResult('x'.repeat(8001));
    expect(result).toMatchObject({ truncated: true, originalLength: 8001, omitted: 1 });
    expect(result.text).toBe(`${'x'.repeat(5200)}${marker(1)}${'x'.repeat(2800)}`);
  });

  it('keeps 65% of the budget as head and the rest as tail when there is no white space to cut at', () => {
    // maxChars 20: a head of 13 characters, a tail of 7.
    expect(truncateResult('x'.repeat(100), { maxChars: 20 })).toEqual({
      text: `${'x'.repeat(13)}${marker(80)}${'x'.repeat(7)}`,
      truncated: true,
      originalLength: 100,
      omitted: 80,
    });
  });

  it('ends the head at the last white space in the final 20% of its budget', () => {
    const text = 'x'.repeat(100);
    // The head's budget is 13: white space at 11 to 13 can end it, at 10 it is too early.
    expect(truncateResult(spacedAt(text, 11), { maxChars: 20 }).text).toBe(`${'x'.repeat(11)}${marker(82)}${'x'.repeat(7)}`);
    expect(truncateResult(spacedAt(text, 11, 12), { maxChars: 20 }).text).toBe(`${'x'.repeat(11)}${marker(81)}${'x'.repeat(7)}`);
    expect(truncateResult(spacedAt(text, 13), { maxChars: 20 }).text).toBe(`${'x'.repeat(13)}${marker(80)}${'x'.repeat(7)}`);
    expect(truncateResult(spacedAt(text, 10), { maxChars: 20 }).text).toBe(`${'x'.repeat(10)} ${'x'.repeat(2)}${marker(80)}${'x'.repeat(7)}`);
  });

  it('starts the tail at the first white space in the next 20% of what is left', () => {
    const text = 'x'.repeat(100);
    // The tail starts at 93 at the latest; 7 characters are left, so white space at 93 or 94 moves it.
    expect(truncateResult(spacedAt(text, 94), { maxChars: 20 }).text).toBe(`${'x'.repeat(13)}${marker(81)}${'x'.repeat(5)}`);
    expect(truncateResult(spacedAt(text, 93, 94), { maxChars: 20 }).text).toBe(`${'x'.repeat(13)}${marker(80)}${'x'.repeat(5)}`);
    expect(truncateResult(spacedAt(text, 95), { maxChars: 20 }).text).toBe(`${'x'.repeat(13)}${marker(80)}xx ${'x'.repeat(4)}`);
    expect(truncateResult(spacedAt(text, 92), { maxChars: 20 }).text).toBe(`${'x'.repeat(13)}${marker(80)}${'x'.repeat(7)}`);
  });

  it('never splits a surrogate pair at either cut', () => {
    // Head budget 13 and tail start 93 both fall on the second half of a pair: the head gives it
    // up, the tail starts after it.
    expect(truncateResult('😀'.repeat(50), { maxChars: 20 })).toEqual({
      text: `${'😀'.repeat(6)}${marker(82)}${'😀'.repeat(3)}`,
      truncated: true,
      originalLength: 100,
      omitted: 82,
    });
    // The lowest and highest low surrogates (U+10000 and U+10FFFF).
    expect(truncateResult('\u{10000}'.repeat(50), { maxChars: 20 }).text).toBe(`${'\u{10000}'.repeat(6)}${marker(82)}${'\u{10000}'.repeat(3)}`);
    expect(truncateResult('\u{10FFFF}'.repeat(50), { maxChars: 20 }).text).toBe(`${'\u{10FFFF}'.repeat(6)}${marker(82)}${'\u{10FFFF}'.repeat(3)}`);
    // Characters just above the surrogates are no pair.
    expect(truncateResult('\uE000'.repeat(100), { maxChars: 20 }).text).toBe(`${'\uE000'.repeat(13)}${marker(80)}${'\uE000'.repeat(7)}`);
    // A cut on the first half of a pair stays where it is.
    expect(truncateResult(`x${'😀'.repeat(50)}`, { maxChars: 20 }).text).toBe(`x${'😀'.repeat(6)}${marker(82)}${'😀'.repeat(3)}`);
    expect(truncateResult(`${'😀'.repeat(50)}x`, { maxChars: 20 }).text).toBe(`${'😀'.repeat(6)}${marker(82)}${'😀'.repeat(3)}x`);
  });

  it('drops the white space around the cut from head and tail', () => {
    const text = spacedAt('x'.repeat(100), 11, 12, 13, 93, 94);
    expect(truncateResult(text, { maxChars: 20 }).text).toBe(`${'x'.repeat(11)}${marker(80)}${'x'.repeat(5)}`);
  });

  it('keeps well-formed text on both sides and counts what it dropped, for any text', () => {
    // Long texts (fast-check draws at most 10 items unless told the size) of mixed pieces, some
    // without any white space, so the surrogate guard is reached.
    const piece = fc.constantFrom('😀', '𝒳', 'a', 'é', ' ', '\n');
    const text = fc.oneof(
      fc.array(piece, { minLength: 30, maxLength: 400, size: 'max' }).map((pieces) => pieces.join('')),
      fc.array(fc.constantFrom('😀', '𝒳', 'ab'), { minLength: 30, maxLength: 400, size: 'max' }).map((pieces) => pieces.join('')),
    );
    let guarded = 0;
    fc.assert(
      fc.property(text, fc.integer({ min: 20, max: 200 }), (input, maxChars) => {
        const result = truncateResult(input, { maxChars });
        expect(result.originalLength).toBe(input.length);
        if (input.length <= maxChars) {
          expect(result).toEqual({ text: input, truncated: false, originalLength: input.length, omitted: 0 });
          return;
        }
        const parts = result.text.split(marker(result.omitted));
        expect(parts).toHaveLength(2);
        const [head, tail] = parts;
        for (const part of parts) expect(part.isWellFormed()).toBe(true);
        expect(input.startsWith(head)).toBe(true);
        expect(input.endsWith(tail)).toBe(true);
        expect(result.omitted).toBeGreaterThan(0);
        expect(head.length + tail.length + result.omitted).toBeLessThanOrEqual(input.length);
        expect(head.length).toBeLessThanOrEqual(Math.floor(maxChars * 0.65));
        expect(tail.length).toBeLessThanOrEqual(maxChars - Math.floor(maxChars * 0.65));
        if (!/\s/.test(input)) guarded++;
      }),
      { numRuns: 300 },
    );
    expect(guarded).toBeGreaterThan(30);
  });
});

describe('cutAtWordBoundary', () => {
  it('cuts at the last word boundary within the limit and marks the cut', () => {
    expect(cutAtWordBoundary('alpha beta gamma delta', 12)).toBe('alpha beta …');
    expect(cutAtWordBoundary('alpha beta  gamma', 12)).toBe('alpha beta …');
    expect(cutAtWordBoundary('  alpha beta gamma', 13)).toBe('  alpha beta …');
  });

  it('leaves text within the limit alone', () => {
    expect(cutAtWordBoundary('short', 12)).toBe('short');
    expect(cutAtWordBoundary('x'.repeat(12), 12)).toBe('x'.repeat(12));
  });

  it('cuts a word without white space at the limit, never inside a surrogate pair', () => {
    expect(cutAtWordBoundary('x'.repeat(20), 12)).toBe(`${'x'.repeat(12)} …`);
    expect(cutAtWordBoundary('😀'.repeat(10), 7)).toBe(`${'😀'.repeat(3)} …`);
  });
});
