import { describe, expect, it } from 'vitest';
import { unifiedDiff } from './unified-diff.ts';

const numbered = (count: number) => `${Array.from({ length: count }, (_, index) => `line ${index + 1}`).join('\n')}\n`;

describe('unifiedDiff', () => {
  it('writes the hunks diff -u writes: three lines of context, nearby changes in one hunk, distant ones apart', () => {
    const before = numbered(30);
    const after = before.replace('line 5\n', 'line five\n').replace('line 20\n', '').replace('line 25\n', 'line 25\nnew 25b\n');
    expect(unifiedDiff('b.txt', before, after)).toBe(
      [
        '--- a/b.txt',
        '+++ b/b.txt',
        '@@ -2,7 +2,7 @@',
        ' line 2',
        ' line 3',
        ' line 4',
        '-line 5',
        '+line five',
        ' line 6',
        ' line 7',
        ' line 8',
        '@@ -17,12 +17,12 @@',
        ...[17, 18, 19].map((line) => ` line ${line}`),
        '-line 20',
        ...[21, 22, 23, 24, 25].map((line) => ` line ${line}`),
        '+new 25b',
        ...[26, 27, 28].map((line) => ` line ${line}`),
      ].join('\n'),
    );
  });

  it('diffs a new file from /dev/null, and shows a change of the final newline', () => {
    expect(unifiedDiff('a.md', null, '# A\nText.\n')).toBe('--- /dev/null\n+++ b/a.md\n@@ -0,0 +1,2 @@\n+# A\n+Text.');
    expect(unifiedDiff('c.txt', 'a\nb', 'a\nb\n')).toBe('--- a/c.txt\n+++ b/c.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b');
  });

  it('cuts a long diff with a "... N more lines" line, and a long line with how many characters it left out', () => {
    const diff = unifiedDiff('big.txt', null, numbered(250), { maxLines: 100 }).split('\n');
    expect(diff).toHaveLength(2 + 100 + 1);
    expect(diff.at(-2)).toBe('+line 99');
    expect(diff.at(-1)).toBe('... 151 more lines');
    expect(
      unifiedDiff('wide.txt', 'x\n', `${'y'.repeat(500)}\n`, { maxLineLength: 400 })
        .split('\n')
        .at(-1),
    ).toBe(`+${'y'.repeat(399)}… (101 more characters)`);
  });

  it('shows a middle that differs beyond the search limit as one block, still correct', () => {
    const before = `${Array.from({ length: 50 }, (_, index) => `a${index}`).join('\n')}\n`;
    const after = `${Array.from({ length: 50 }, (_, index) => (index % 2 === 0 ? `a${index}` : `b${index}`)).join('\n')}\n`;
    const limited = unifiedDiff('f.txt', before, after, { maxEditDistance: 4 }).split('\n');
    expect(limited.filter((line) => line.startsWith('-a')).length).toBe(49);
    expect(limited.filter((line) => line.startsWith('+')).length - 1).toBe(49);
    const exact = unifiedDiff('f.txt', before, after).split('\n');
    expect(exact.filter((line) => line.startsWith('-a')).length).toBe(25);
  });
});

describe('unifiedDiff on large files', () => {
  it('diffs a 100,000-line file rewritten whole promptly, as one block cut to the line limit', () => {
    const before = `${Array.from({ length: 100_000 }, (_, index) => `old ${index}`).join('\n')}\n`;
    const after = `${Array.from({ length: 100_000 }, (_, index) => `new ${index}`).join('\n')}\n`;
    const started = performance.now();
    const diff = unifiedDiff('big.txt', before, after).split('\n');
    // Linear work: a few hundred ms on a loaded machine, where an object or a search per line took many seconds.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(diff.slice(0, 4)).toEqual(['--- a/big.txt', '+++ b/big.txt', '@@ -1,100000 +1,100000 @@', '-old 0']);
    expect(diff.at(-1)).toBe('... 199901 more lines');
  });
});
