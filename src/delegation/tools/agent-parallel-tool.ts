import { z } from 'zod';
import { ToolInputError, defineTool } from '../../tools/define-tool.ts';
import type { RunRecord } from '../../store/records.ts';
import { awaitForeground, promotedNote } from '../await-foreground.ts';
import type { DelegationScope, DelegationServices } from '../delegation-services.ts';
import { ToolDeniedError } from '../../approvals/tool-denied-error.ts';
import { deniedOutput, formatRunOutput, progressBody } from '../format-run-output.ts';
import { checkDelegation, startDelegation } from '../start-delegation.ts';
import { agentInputSchema } from './agent-tool.ts';
import { readDescription } from './read-description.ts';

const taskSchema = agentInputSchema.pick({ agent: true, task: true, description: true, context: true, max_turns: true, output_schema: true });

/** One schema per `maxParallelTasks` value, so its JSON schema is converted once. */
const inputSchemas = new Map<number, ReturnType<typeof parallelInputSchema>>();

function parallelInputSchema(max: number) {
  return z.object({
    tasks: z.array(taskSchema).min(1, 'must hold at least one task').max(max, `must hold at most ${max} tasks`),
    run_in_background: z.boolean().optional(),
  });
}

/** The `agent_parallel` tool: fan out, wait for all, one section per run. */
export function createAgentParallelTool(services: DelegationServices, scope: DelegationScope) {
  const max = services.limits.maxParallelTasks;
  let inputSchema = inputSchemas.get(max);
  if (!inputSchema) inputSchemas.set(max, (inputSchema = parallelInputSchema(max)));
  return defineTool({
    name: 'agent_parallel',
    // Made of runs' results, records and transcripts, which were redacted as they were written.
    carriesSecrets: false,
    description: `${readDescription('agent-parallel.txt')}\nAvailable agents:\n${services.agents.describeDelegable() || '(none)'}`,
    inputSchema,
    execute: async (input, { toolCallId, abortSignal }) => {
      const background = input.run_in_background ?? false;
      // Said once for the whole call rather than once per task.
      const spent = await services.budget.sessionSpent(scope.sessionId);
      if (spent) throw new ToolInputError(spent);
      const problems: string[] = [];
      for (const [index, task] of input.tasks.entries()) {
        await checkDelegation(services, scope, { ...task, mode: 'foreground', toolCallId }).catch((error: unknown) => {
          problems.push(`tasks.${index}: ${(error as Error).message}`);
        });
      }
      if (problems.length > 0) throw new ToolInputError(`No run was started. ${problems.join(' ')}`);
      const started: RunRecord[] = [];
      // Each task meets the rules on delegation on its own: a denied one makes no run, its siblings start.
      const denied = new Map<number, string>();
      for (const [index, task] of input.tasks.entries()) {
        try {
          started.push(await startDelegation(services, scope, { ...task, mode: background ? 'background' : 'foreground', toolCallId }));
        } catch (error) {
          if (!ToolDeniedError.isInstance(error)) throw error;
          denied.set(index, deniedOutput(task.agent, error.message));
        }
      }
      if (started.length === 0) throw new ToolDeniedError([...denied.values()].join('\n---\n'));
      const format = { maxResultChars: services.limits.maxResultChars };
      if (background) {
        const sections = started.map((run) =>
          formatRunOutput(run, {
            ...format,
            note: run.status === 'failed' ? undefined : 'Started in the background; you will be notified when it finishes.',
            body: run.status === 'failed' ? undefined : progressBody(run),
          }),
        );
        return inTaskOrder(sections, denied).join('\n---\n');
      }
      const done = await awaitForeground(services, started, abortSignal ?? new AbortController().signal, 'agent_parallel');
      const sections = done.map((run) =>
        run.status === 'running' || run.status === 'queued'
          ? formatRunOutput(run, { ...format, note: promotedNote(services), body: `Latest activity: ${run.last_activity ?? 'none yet'}` })
          : formatRunOutput(run, format),
      );
      return inTaskOrder(sections, denied).join('\n---\n');
    },
  });
}

/** The runs' sections with the denied tasks' sections put back at their places. */
function inTaskOrder(sections: string[], denied: ReadonlyMap<number, string>): string[] {
  const all: string[] = [];
  let next = 0;
  for (let index = 0; index < sections.length + denied.size; index++) all.push(denied.get(index) ?? sections[next++]);
  return all;
}
