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

/** The longest changed middle (old and new lines together) the line diff searches; a longer one is one block. */
const maxSearchedLines = 20_000;

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

/** An edit script as the hunks read it: an object only for each line of a searched middle. */
interface Script {
  length: number;
  kind(index: number): Edit['kind'];
  line(index: number): string;
  /** The runs of changed positions, `[from, to)`, in order. */
  runs: Array<[number, number]>;
}

/** The script from `before` to `after`: common ends, then the shortest script of the middle (or the middle as one block). */
function lineScript(before: readonly string[], after: readonly string[], maxD: number): Script {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let [endBefore, endAfter] = [before.length, after.length];
  while (endBefore > start && endAfter > start && before[endBefore - 1] === after[endAfter - 1]) [endBefore, endAfter] = [endBefore - 1, endAfter - 1];
  const [oldCount, newCount] = [endBefore - start, endAfter - start];
  // A search over a long middle could hold the event loop for seconds: past this size it is one block.
  const middle = oldCount + newCount <= maxSearchedLines ? shortestEdits(before.slice(start, endBefore), after.slice(start, endAfter), maxD) : null;
  const suffixStart = start + (middle ? middle.length : oldCount + newCount);
  const runs: Array<[number, number]> = [];
  if (middle === null) {
    if (suffixStart > start) runs.push([start, suffixStart]);
  } else {
    middle.forEach((edit, offset) => {
      if (edit.kind === ' ') return;
      const last = runs.at(-1);
      if (last && last[1] === start + offset) last[1]++;
      else runs.push([start + offset, start + offset + 1]);
    });
  }
  return {
    length: suffixStart + before.length - endBefore,
    runs,
    kind(index) {
      if (index < start || index >= suffixStart) return ' ';
      return middle ? middle[index - start].kind : index - start < oldCount ? '-' : '+';
    },
    line(index) {
      if (index < start) return before[index];
      if (index >= suffixStart) return before[endBefore + index - suffixStart];
      if (middle) return middle[index - start].line;
      return index - start < oldCount ? before[index] : after[index - oldCount];
    },
  };
}

/**
 * `@@ -3,7 +3,8 @@` hunks of `context` lines around the changes, at most `maxLines` lines; the
 * lines past it are only counted (`hidden`).
 */
function hunks(script: Script, context: number, maxLines: number): { lines: string[]; hidden: number } {
  const { runs } = script;
  const lines: string[] = [];
  let hidden = 0;
  const emit = (line: string) => (lines.length < maxLines ? lines.push(line) : hidden++);
  let [plusBefore, minusBefore] = [0, 0];
  for (let first = 0; first < runs.length; ) {
    let last = first;
    while (last + 1 < runs.length && runs[last + 1][0] - runs[last][1] <= 2 * context) last++;
    const from = Math.max(0, runs[first][0] - context);
    const to = Math.min(script.length, runs[last][1] + context);
    let [plus, minus] = [0, 0];
    for (let run = first; run <= last; run++) for (let index = runs[run][0]; index < runs[run][1]; index++) script.kind(index) === '+' ? plus++ : minus++;
    const range = (line: number, count: number) => (count === 1 ? `${line}` : `${count === 0 ? line - 1 : line},${count}`);
    emit(`@@ -${range(from + 1 - plusBefore, to - from - plus)} +${range(from + 1 - minusBefore, to - from - minus)} @@`);
    for (let index = from; index < to; index++) {
      const line = script.line(index);
      const noFinalNewline = line.endsWith(noNewline);
      if (lines.length >= maxLines) hidden += noFinalNewline ? 2 : 1;
      else {
        emit(`${script.kind(index)}${noFinalNewline ? line.slice(0, -1) : line}`);
        if (noFinalNewline) emit('\\ No newline at end of file');
      }
    }
    [plusBefore, minusBefore] = [plusBefore + plus, minusBefore + minus];
    first = last + 1;
  }
  return { lines, hidden };
}

/**
 * The unified diff (`diff -u`) of a file's text from `before` to `after`, with `--- a/PATH` and
 * `+++ b/PATH` (`--- /dev/null` when `before` is null: a new file). Cut to `maxLines` lines, the
 * rest counted in a last line `... N more lines`, and each line to `maxLineLength` characters.
 * @example unifiedDiff('a.txt', 'one\n', 'two\n') // '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two'
 */
export function unifiedDiff(path: string, before: string | null, after: string, options: UnifiedDiffOptions = {}): string {
  const { context = 3, maxLines = 100, maxLineLength = 400, maxEditDistance = 1000 } = options;
  const { lines, hidden } = hunks(lineScript(linesOf(before ?? ''), linesOf(after), maxEditDistance), context, maxLines);
  const shown = lines.map((line) => (line.length > maxLineLength ? `${line.slice(0, maxLineLength)}… (${line.length - maxLineLength} more characters)` : line));
  if (hidden > 0) shown.push(`... ${hidden} more lines`);
  return [before === null ? '--- /dev/null' : `--- a/${path}`, `+++ b/${path}`, ...shown].join('\n');
}
