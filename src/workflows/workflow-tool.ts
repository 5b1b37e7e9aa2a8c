import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Limits } from '../config/limits.ts';
import type { DelegationScope } from '../delegation/delegation-services.ts';
import { truncateResult } from '../delegation/truncate-result.ts';
import { defineTool, ToolInputError } from '../tools/define-tool.ts';
import { type ScriptSandboxOptions, sandboxedWorkflowScript } from './sandbox/run-sandboxed-script.ts';
import type { WorkflowEngine, WorkflowOutcome } from './workflow-api.ts';

/** The name of the tool, which an agent lists in its `tools` to get it (it is never given by default). */
export const workflowToolName = 'workflow';

/** What the `workflow` tool needs from the runtime. */
export interface WorkflowToolServices {
  engine: WorkflowEngine;
  limits: Pick<Limits, 'maxWorkflowRuns' | 'maxResultChars'>;
  /** Bounds of the sandbox besides the number of runs. @default the sandbox's defaults */
  sandbox?: Omit<ScriptSandboxOptions, 'maxRuns'>;
}

/** Input of the `workflow` tool (docs/workflows.md). */
export const workflowInputSchema = z.object({
  script: z
    .string()
    .min(1, 'must be the body of an async function of w and input, for example: return w.agent("reviewer", "Review a.ts");')
    .describe('JavaScript: the body of an async function with w and input in scope; return a JSON value.'),
  input: z.unknown().optional().describe('Any JSON value, available to the script as input. Default null.'),
});

let description: string | undefined;

/**
 * The `workflow` tool: runs a model-written script of runs in the sandbox, as a durable workflow
 * of the caller's session whose runs are the caller's children. It asks no approval itself: the
 * runs it starts obey the rules for delegation, and their tools obey theirs.
 */
export function createWorkflowTool(services: WorkflowToolServices, scope: DelegationScope) {
  description ??= readFileSync(new URL('./workflow-tool.txt', import.meta.url), 'utf8').trim();
  return defineTool({
    name: workflowToolName,
    // Made of runs' results, which were redacted as they were written, and of the script's own values.
    carriesSecrets: false,
    description,
    inputSchema: workflowInputSchema,
    argument: (input) => input.script.split('\n')[0].slice(0, 80),
    execute: async ({ script, input }, { abortSignal }) => {
      const maxRuns = services.limits.maxWorkflowRuns;
      const started = await services.engine.run(sandboxedWorkflowScript(script, { ...services.sandbox, maxRuns }), input ?? null, {
        source: { kind: 'script', text: script },
        name: 'script',
        sessionId: scope.sessionId,
        parentRunId: scope.parentRunId,
        depth: scope.depth,
        maxRuns,
        signal: abortSignal,
      });
      const outcome = await started.done;
      const text = formatWorkflowOutput(outcome, services.limits.maxResultChars);
      if (outcome.status !== 'completed') throw new ToolInputError(text);
      return text;
    },
  });
}

/**
 * What the model reads of a workflow's end: its id and status, `[error: kind: message]`, a line
 * per run (`run: <id> | <agent> | <status> | <key>`), then the return value as JSON (cut to
 * `maxResultChars` like a run's result).
 */
export function formatWorkflowOutput(outcome: WorkflowOutcome, maxResultChars: number): string {
  const lines = [`workflow_id: ${outcome.id}`, `status: ${outcome.status}`];
  if (outcome.error) lines.push(`error: ${outcome.error.kind}: ${outcome.error.message}`);
  lines.push(`runs: ${outcome.runs.length}`);
  for (const run of outcome.runs) lines.push(`run: ${run.run_id} | ${run.agent} | ${run.status} | ${run.key}`);
  if (outcome.status !== 'completed') return lines.join('\n');
  const json = JSON.stringify(outcome.output ?? null, null, 2);
  const cut = truncateResult(json, { maxChars: maxResultChars });
  if (cut.truncated) lines.push(`[truncated: ${cut.originalLength} characters, ${cut.omitted} omitted]`);
  return `${lines.join('\n')}\n\n${cut.text}`;
}
