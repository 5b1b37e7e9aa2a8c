import { z } from 'zod';
import { defineTool } from '../../tools/define-tool.ts';
import { awaitForeground, promotedNote } from '../await-foreground.ts';
import type { DelegationScope, DelegationServices } from '../delegation-services.ts';
import { formatRunOutput } from '../format-run-output.ts';
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
});

/** The `agent` tool: delegate one task, in the foreground or the background. */
export function createAgentTool(services: DelegationServices, scope: DelegationScope) {
  const delegable = services.agents.describeDelegable();
  return defineTool({
    name: 'agent',
    // Made of runs' results, records and transcripts, which were redacted as they were written.
    carriesSecrets: false,
    description: `${readDescription('agent.txt')}\n${delegable || '(none)'}`,
    inputSchema: agentInputSchema,
    execute: async (input, { toolCallId, abortSignal }) => {
      const background = input.run_in_background ?? false;
      const run = await startDelegation(services, scope, {
        agent: input.agent,
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
          body: run.status === 'failed' ? undefined : `The run is ${run.status === 'queued' ? 'waiting for a slot' : 'working'}.`,
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
