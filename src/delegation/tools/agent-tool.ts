import { z } from 'zod';
import { ToolInputError, defineTool } from '../../tools/define-tool.ts';
import { awaitForeground, promotedNote } from '../await-foreground.ts';
import type { DelegationScope, DelegationServices } from '../delegation-services.ts';
import { formatRunOutput, progressBody } from '../format-run-output.ts';
import { startDelegation } from '../start-delegation.ts';
import { readDescription } from './read-description.ts';

/** Input of the `agent` tool (docs/runs-and-limits.md). */
export const agentInputSchema = z.object({
  agent: z.string().describe('Name of the agent to delegate to.'),
  task: z.string().min(1, 'must be a non-empty string saying what the subagent should do').describe('The task, verbatim: the subagent’s first message.'),
  description: z.string().max(80, 'must be at most 80 characters').optional().describe('A short label for lists (≤ 80 chars).'),
  context: z.string().optional().describe('Extra context from this conversation that the subagent needs.'),
  run_in_background: z.boolean().optional().describe('Return at once; you are notified when it finishes. Default false.'),
  max_turns: z.number().int('must be a whole number').min(1, 'must be at least 1').optional().describe('Turn cap for this run.'),
  resume: z.string().optional().describe('run_id of an earlier finished run of yours to continue.'),
  output_schema: z
    .record(z.string(), z.unknown(), { error: 'must be a JSON Schema object, like {"type": "object", "properties": {"title": {"type": "string"}}}' })
    .optional()
    .describe('A JSON Schema (top level "type": "object") the result must match; you then get the value as JSON (output: json).'),
  fork: z.boolean().optional().describe('Start the subagent with a copy of this conversation so far, then task. Default false.'),
});

/** The input where cadre's own loop holds the caller's conversation: with `fork`, `agent` may be left out. */
const forkingInputSchema = agentInputSchema.extend({
  agent: z.string().optional().describe('Name of the agent to delegate to. With fork: true, leave it out to fork yourself.'),
});

/** The input where cadre does not hold the caller's conversation (cadre.tools(), cadre mcp): no `fork`. */
const plainInputSchema = agentInputSchema.omit({ fork: true });

/** The `agent` tool: delegate one task, in the foreground or the background. */
export function createAgentTool(services: DelegationServices, scope: DelegationScope) {
  const delegable = services.agents.describeDelegable();
  const forking = scope.agent !== undefined;
  const inputSchema: z.ZodType<z.infer<typeof forkingInputSchema>> = forking ? forkingInputSchema : plainInputSchema;
  return defineTool({
    name: 'agent',
    // Made of runs' results, records and transcripts, which were redacted as they were written.
    carriesSecrets: false,
    description: `${readDescription('agent.txt')}\n\n${readDescription(forking ? 'agent-fork.txt' : 'agent-no-fork.txt')}\n\nAvailable agents:\n${delegable || '(none)'}`,
    inputSchema,
    execute: async (input, { toolCallId, abortSignal, messages }) => {
      const background = input.run_in_background ?? false;
      const fork = input.fork === true;
      if (input.agent === undefined && !fork)
        throw new ToolInputError('agent: Required. Name the agent to delegate to (only with fork: true may it be left out).');
      const run = await startDelegation(services, scope, {
        agent: input.agent ?? scope.agent ?? '',
        ...(fork ? { fork: { messages } } : {}),
        task: input.task,
        description: input.description,
        context: input.context,
        max_turns: input.max_turns,
        resume: input.resume,
        output_schema: input.output_schema,
        mode: background ? 'background' : 'foreground',
        toolCallId,
      });
      const format = { maxResultChars: services.limits.maxResultChars };
      if (background || run.status === 'failed') {
        const note =
          run.status === 'failed'
            ? undefined
            : `Started in the background. You will get a notification when it finishes; use agent_output with run_id ${run.id} to read it, or agent_stop to stop it.`;
        return formatRunOutput(run, {
          ...format,
          note,
          body: run.status === 'failed' ? undefined : progressBody(run),
        });
      }
      const [done] = await awaitForeground(services, [run], abortSignal ?? new AbortController().signal, 'agent');
      if (done.status === 'running' || done.status === 'queued') {
        return formatRunOutput(done, { ...format, note: promotedNote(services), body: `Latest activity: ${done.last_activity ?? 'none yet'}` });
      }
      return formatRunOutput(done, format);
    },
  });
}
