import { z } from 'zod';
import { ToolInputError, defineTool } from '../../tools/define-tool.ts';
import type { RunRecord } from '../../store/records.ts';
import { awaitForeground, promotedNote } from '../await-foreground.ts';
import type { DelegationScope, DelegationServices } from '../delegation-services.ts';
import { formatRunOutput } from '../format-run-output.ts';
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
      for (const task of input.tasks) {
        started.push(await startDelegation(services, scope, { ...task, mode: background ? 'background' : 'foreground', toolCallId }));
      }
      const format = { maxResultChars: services.limits.maxResultChars };
      if (background) {
        return started
          .map((run) =>
            formatRunOutput(run, {
              ...format,
              note: run.status === 'failed' ? undefined : 'Started in the background; you will be notified when it finishes.',
              body: run.status === 'failed' ? undefined : `The run is ${run.status === 'queued' ? 'waiting for a slot' : 'working'}.`,
            }),
          )
          .join('\n---\n');
      }
      const done = await awaitForeground(services, started, abortSignal ?? new AbortController().signal, 'agent_parallel');
      return done
        .map((run) =>
          run.status === 'running' || run.status === 'queued'
            ? formatRunOutput(run, { ...format, note: promotedNote(services), body: `Latest activity: ${run.last_activity ?? 'none yet'}` })
            : formatRunOutput(run, format),
        )
        .join('\n---\n');
    },
  });
}
