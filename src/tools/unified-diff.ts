/** Options of {@link unifiedDiff}. */
export interface UnifiedDiffOptions {
  /** Unchanged lines shown around each change. @default 3 */
  context?: number;
  /** Lines of the diff kept (the two header lines not counted); the rest becomes `... N more lines`. @default 100 */
  maxLines?: number;
  /** Characters of one line kept; the rest becomes `… (N more characters)`. @default 400 */
  maxLineLength?: number;
  /** How far the line diff searches before it shows the changed middle as one block. @default 1000 */
  maxEditDistance?: number;
}

type Edit = { kind: ' ' | '-' | '+'; line: string };

/** Marks a last line without a newline, so that adding or removing the final newline is a change. */
const noNewline = '\u0000';

function linesOf(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  else lines[lines.length - 1] += noNewline;
  return lines;
}

/**
 * The shortest edit script from `a` to `b` (Myers' O(ND) algorithm), or null when it needs more
 * than `maxD` edits. Each step keeps only the part of the frontier it can reach, so memory is O(D²).
 */
function shortestEdits(a: readonly string[], b: readonly string[], maxD: number): Edit[] | null {
  const [n, m] = [a.length, b.length];
  const offset = n + m + 1;
  const frontier = new Int32Array(2 * offset + 1);
  const trace: Int32Array[] = [];
  const at = (snapshot: Int32Array, d: number, k: number) => snapshot[k + d + 1];
  for (let d = 0; d <= Math.min(n + m, maxD); d++) {
    trace.push(frontier.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && frontier[offset + k - 1] < frontier[offset + k + 1]);
      let x = down ? frontier[offset + k + 1] : frontier[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) [x, y] = [x + 1, y + 1];
      frontier[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, at);
    }
  }
  return null;
}

function backtrack(a: readonly string[], b: readonly string[], trace: Int32Array[], at: (snapshot: Int32Array, d: number, k: number) => number): Edit[] {
  const edits: Edit[] = [];
  let [x, y] = [a.length, b.length];
  for (let d = trace.length - 1; d >= 0; d--) {
    const snapshot = trace[d];
    const k = x - y;
    const previousK = k === -d || (k !== d && at(snapshot, d, k - 1) < at(snapshot, d, k + 1)) ? k + 1 : k - 1;
    const previousX = at(snapshot, d, previousK);
    const previousY = previousX - previousK;
    while (x > previousX && y > previousY) {
      [x, y] = [x - 1, y - 1];
      edits.push({ kind: ' ', line: a[x] });
    }
    if (d > 0) {
      if (x === previousX) edits.push({ kind: '+', line: b[--y] });
      else edits.push({ kind: '-', line: a[--x] });
    }
  }
  return edits.reverse();
}

/** The edits from `before` to `after`: common ends first, then the shortest script of the middle (or one block). */
function lineEdits(before: readonly string[], after: readonly string[], maxD: number): Edit[] {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let [endBefore, endAfter] = [before.length, after.length];
  while (endBefore > start && endAfter > start && before[endBefore - 1] === after[endAfter - 1]) [endBefore, endAfter] = [endBefore - 1, endAfter - 1];
  const [oldMiddle, newMiddle] = [before.slice(start, endBefore), after.slice(start, endAfter)];
  const middle = shortestEdits(oldMiddle, newMiddle, maxD) ?? [
    ...oldMiddle.map((line): Edit => ({ kind: '-', line })),
    ...newMiddle.map((line): Edit => ({ kind: '+', line })),
  ];
  const same = (line: string): Edit => ({ kind: ' ', line });
  return [...before.slice(0, start).map(same), ...middle, ...before.slice(endBefore).map(same)];
}

/** `@@ -3,7 +3,8 @@` hunks of `context` lines around the changes. */
function hunks(edits: readonly Edit[], context: number): string[] {
  const changed = edits.flatMap((edit, index) => (edit.kind === ' ' ? [] : [index]));
  const out: string[] = [];
  let index = 0;
  while (index < changed.length) {
    let last = index;
    while (last + 1 < changed.length && changed[last + 1] - changed[last] <= 2 * context + 1) last++;
    const from = Math.max(0, changed[index] - context);
    const to = Math.min(edits.length, changed[last] + context + 1);
    let [oldLine, newLine] = [1, 1];
    for (const edit of edits.slice(0, from)) {
      if (edit.kind !== '+') oldLine++;
      if (edit.kind !== '-') newLine++;
    }
    const part = edits.slice(from, to);
    const oldCount = part.filter((edit) => edit.kind !== '+').length;
    const newCount = part.filter((edit) => edit.kind !== '-').length;
    const range = (line: number, count: number) => (count === 1 ? `${line}` : `${count === 0 ? line - 1 : line},${count}`);
    out.push(`@@ -${range(oldLine, oldCount)} +${range(newLine, newCount)} @@`);
    for (const edit of part) {
      out.push(`${edit.kind}${edit.line.replace(noNewline, '')}`);
      if (edit.line.endsWith(noNewline)) out.push('\\ No newline at end of file');
    }
    index = last + 1;
  }
  return out;
}

/**
 * The unified diff (`diff -u`) of a file's text from `before` to `after`, with `--- a/PATH` and
 * `+++ b/PATH` (`--- /dev/null` when `before` is null: a new file). Cut to `maxLines` lines, the
 * rest counted in a last line `... N more lines`, and each line to `maxLineLength` characters.
 * @example unifiedDiff('a.txt', 'one\n', 'two\n') // '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two'
 */
export function unifiedDiff(path: string, before: string | null, after: string, options: UnifiedDiffOptions = {}): string {
  const { context = 3, maxLines = 100, maxLineLength = 400, maxEditDistance = 1000 } = options;
  const body = hunks(lineEdits(linesOf(before ?? ''), linesOf(after), maxEditDistance), context);
  const shown = body.slice(0, maxLines).map((line) => (line.length > maxLineLength ? `${line.slice(0, maxLineLength)}… (${line.length - maxLineLength} more characters)` : line));
  if (body.length > maxLines) shown.push(`... ${body.length - maxLines} more lines`);
  return [before === null ? '--- /dev/null' : `--- a/${path}`, `+++ b/${path}`, ...shown].join('\n');
}
