import { formatElapsed } from '../delegation/run-views.ts';
import { clampActivity } from '../runs/activity.ts';
import type { RunRecord } from '../store/records.ts';

/** `[run_01K... researcher]`: the prefix of a run's plain log lines. */
export function runLabel(run: Pick<RunRecord, 'id' | 'agent'>): string {
  return `[${run.id} ${run.agent}]`;
}

/** How many characters of a run id the live view shows; `cadre stop` takes them for an active run. */
export const shortRunIdLength = 6;

/**
 * The end of a run's id (its random part: runs of one session share the time prefix), short
 * enough for a live line and enough for `cadre stop` to find an active run by it.
 * @example shortRunId('run_01JD8X2Q7W3NB5K2M4P6R8T0V1') // 'R8T0V1'
 */
export function shortRunId(id: string): string {
  return id.replace(/^run_/, '').slice(-shortRunIdLength);
}

/** What a finished run came to, in one line of at most `max` characters. */
export function endDetail(run: Pick<RunRecord, 'status' | 'result' | 'error' | 'partial_result'>, max = 80): string {
  if (run.error) return clampActivity(`${run.error.kind}: ${run.error.message}`, max);
  // A value reads best as compact JSON on one line.
  if (run.result?.value !== undefined) return clampActivity(`json ${JSON.stringify(run.result.value)}`, max);
  if (run.result && run.result.text.trim() !== '') return clampActivity(run.result.text, max);
  if (run.partial_result && run.partial_result.trim() !== '') return clampActivity(`partial: ${run.partial_result}`, max);
  if (run.status === 'abandoned') return 'its process died';
  return run.status === 'completed_empty' ? '(no final text)' : '';
}

/** `completed (12s): The store keeps...`: the plain line of a run that ended. */
export function describeRunEnd(run: RunRecord, now: string): string {
  const detail = endDetail(run);
  return `${run.status} (${formatElapsed(run, now)})${detail === '' ? '' : `: ${detail}`}`;
}

/** Pads cells into aligned columns; the last column is not padded. */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
