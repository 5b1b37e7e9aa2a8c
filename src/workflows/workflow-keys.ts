import { createHash } from 'node:crypto';
import type { WorkflowAgentOptions } from './workflow-api.ts';

/**
 * Where a call stands in its script: the path of enclosing `w.parallel` and `w.pipeline` calls,
 * each segment the combinator's number on its own path and the branch. `p1.3` is branch 3 of the
 * second `parallel` on the root path; `l0.2.s1` is stage 1 of item 2 of the first `pipeline`.
 */
export type WorkflowPath = string;

/** The path of branch `index` of the `combinator`th `parallel` under `path`. */
export function parallelPath(path: WorkflowPath, combinator: number, index: number): WorkflowPath {
  return joinPath(path, `p${combinator}.${index}`);
}

/** The path of stage `stage` of item `index` of the `combinator`th `pipeline` under `path`. */
export function pipelinePath(path: WorkflowPath, combinator: number, index: number, stage: number): WorkflowPath {
  return joinPath(path, `l${combinator}.${index}.s${stage}`);
}

/** A call's durable key: its path and its number on that path (`p0.3#0`; the root path's first call is `#0`). */
export function callKey(path: WorkflowPath, number: number): string {
  return `${path}#${number}`;
}

function joinPath(path: WorkflowPath, segment: string): WorkflowPath {
  return path === '' ? segment : `${path}/${segment}`;
}

/** JSON with object keys sorted, so equal inputs hash equally whatever their key order. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The hash of a call's inputs (agent, task, options) that a replay compares at its key. */
export function callInputHash(agent: string, task: string, options: WorkflowAgentOptions): string {
  return createHash('sha256')
    .update(stableJson({ agent, task, options }))
    .digest('hex')
    .slice(0, 32);
}
