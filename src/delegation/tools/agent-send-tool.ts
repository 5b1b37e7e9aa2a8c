import { z } from 'zod';
import { defineTool } from '../../tools/define-tool.ts';
import { awaitForeground, promotedNote } from '../await-foreground.ts';
import type { DelegationScope, DelegationServices } from '../delegation-services.ts';
import { formatRunOutput } from '../format-run-output.ts';
import { sendToRun, type SendToRunResult } from '../send-to-run.ts';
import { readDescription } from './read-description.ts';

/** Input of the `agent_send` tool (docs/talking-to-runs.md). */
export const agentSendInputSchema = z.object({
  run_id: z.string().min(1, 'is required').describe('The run to send the message to.'),
  message: z
    .string()
    .refine((value) => value.trim() !== '', 'must not be empty')
    .describe('What the subagent should know or do next.'),
  interrupt: z.boolean().optional().describe('Abort its model call and tool calls under way first. Default false.'),
  run_in_background: z.boolean().optional().describe('When the run had finished and a follow-up starts: return at once. Default false.'),
});

/** The `agent_send` tool: the parent model sends a message to one of its runs. */
export function createAgentSendTool(services: DelegationServices, scope: DelegationScope) {
  return defineTool({
    name: 'agent_send',
    // Made of runs' records and results, which were redacted as they were written.
    carriesSecrets: false,
    description: readDescription('agent-send.txt'),
    inputSchema: agentSendInputSchema,
    execute: async (input, { toolCallId, abortSignal }) => {
      const background = input.run_in_background ?? false;
      const sent = await sendToRun(services, scope, {
        runId: input.run_id,
        message: input.message,
        from: 'parent',
        interrupt: input.interrupt,
        mode: background ? 'background' : 'foreground',
        toolCallId,
      });
      if (sent.kind !== 'follow-up' || background || sent.run.status === 'failed') return describeSent(services, sent);
      const [done] = await awaitForeground(services, [sent.run], abortSignal ?? new AbortController().signal, 'agent_send');
      const format = { maxResultChars: services.limits.maxResultChars };
      if (done.status === 'running' || done.status === 'queued') {
        return formatRunOutput(done, { ...format, note: promotedNote(services), body: `Latest activity: ${done.last_activity ?? 'none yet'}` });
      }
      return formatRunOutput(done, { ...format, note: `A follow-up of run ${sent.followed.id}, which had finished.` });
    },
  });
}

/** The output for a message that was stored (or started a follow-up in the background), in the `agent` shape. */
export function describeSent(services: DelegationServices, sent: SendToRunResult): string {
  const format = { maxResultChars: services.limits.maxResultChars };
  switch (sent.kind) {
    case 'queued':
      return formatRunOutput(sent.run, {
        ...format,
        note: 'The run had not started: your message was added to its task.',
        body: 'The run is waiting for a slot.',
      });
    case 'running': {
      const when = sent.message.interrupt
        ? 'Its work under way is interrupted and it goes on with your message at once.'
        : 'Your message reaches it before its next model call.';
      const note = sent.reachable
        ? when
        : 'The process that runs it cannot be reached now: your message is stored and reaches the subagent when the run goes on (it resumes, or its process answers again).';
      return formatRunOutput(sent.run, { ...format, note, body: 'The run is working.' });
    }
    case 'follow-up':
      return formatRunOutput(sent.run, {
        ...format,
        note: `Run ${sent.followed.id} had finished: this follow-up run continues its conversation with your message. You will get a notification when it finishes; use agent_output with run_id ${sent.run.id} to read it.`,
        body: sent.run.status === 'failed' ? undefined : `The run is ${sent.run.status === 'queued' ? 'waiting for a slot' : 'working'}.`,
      });
  }
}
