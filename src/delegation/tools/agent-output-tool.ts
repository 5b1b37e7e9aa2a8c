import { z } from 'zod';
import { isFinished, type RunRecord } from '../../store/records.ts';
import { describeStoredRunEvent } from '../../runs/run-events.ts';
import { ToolInputError, defineTool } from '../../tools/define-tool.ts';
import type { DelegationScope, DelegationServices } from '../delegation-services.ts';
import { formatRunOutput } from '../format-run-output.ts';
import { describePage, pageResult } from '../page-result.ts';
import { messageCounts } from '../../runs/run-inbox.ts';
import { renderTranscript, sentMessagesBySeq } from '../render-transcript.ts';
import { consumeRun, formatElapsed, noSuchRun } from '../run-views.ts';
import { readDescription } from './read-description.ts';

const inputSchema = z.object({
  run_id: z.string().min(1, 'is required'),
  wait: z.boolean().optional(),
  timeout_seconds: z.number().int('must be a whole number').min(1, 'must be at least 1').max(600, 'must be at most 600').optional(),
  detail: z.enum(['result', 'transcript'], { error: 'must be result or transcript' }).optional(),
  offset: z
    .number({ error: 'must be a whole number of characters, 0 or more' })
    .int('must be a whole number of characters, 0 or more')
    .min(0, 'must be 0 or more')
    .optional(),
  limit: z
    .number({ error: 'must be a whole number of characters, 1 or more' })
    .int('must be a whole number of characters, 1 or more')
    .min(1, 'must be at least 1')
    .optional(),
});

/** The `agent_output` tool: read a run's result, or its progress, optionally waiting. */
export function createAgentOutputTool(services: DelegationServices, scope: DelegationScope) {
  return defineTool({
    name: 'agent_output',
    // Made of runs' results, records and transcripts, which were redacted as they were written.
    carriesSecrets: false,
    description: readDescription('agent-output.txt'),
    inputSchema,
    execute: async ({ run_id: runId, wait = false, timeout_seconds: timeoutSeconds = 30, detail = 'result', offset, limit }, { abortSignal }) => {
      const paging = offset !== undefined || limit !== undefined;
      if (paging && detail === 'transcript') throw new ToolInputError('offset and limit page the result; leave them out with detail: "transcript".');
      const maxLimit = services.limits.maxResultChars;
      if (limit !== undefined && limit > maxLimit)
        throw new ToolInputError(`limit: must be at most ${maxLimit} characters (limits.maxResultChars); read on with a larger offset.`);
      let run = await services.store.getRun(runId);
      if (!run || run.parent_session_id !== scope.sessionId) throw new ToolInputError(noSuchRun(runId));
      if (!isFinished(run.status) && wait) run = await services.runs.wait(runId, { signal: abortSignal, timeoutMs: timeoutSeconds * 1000 });
      const format = { maxResultChars: services.limits.maxResultChars };
      if (!isFinished(run.status)) {
        const note = wait
          ? `Still ${run.status} after waiting ${timeoutSeconds} s; call again with wait: true to keep waiting.`
          : 'Not finished yet; call again with wait: true to wait for it.';
        return formatRunOutput(run, { ...format, note, body: await describeProgress(services, run) });
      }
      if (paging) {
        const full = run.result?.text ?? (run.partial_result?.trim() ? run.partial_result : null);
        if (full === null)
          throw new ToolInputError(`Run ${run.id} ended ${run.status} without any result text to page; call agent_output without offset and limit.`);
        const page = pageResult(full, { offset: offset ?? 0, limit: limit ?? maxLimit });
        run = await consumeRun(services, run, 'agent_output');
        const what = run.result ? '' : 'Partial result (the run did not finish):\n';
        return formatRunOutput(run, { note: describePage(page), body: `${what}${page.text}` });
      }
      run = await consumeRun(services, run, 'agent_output');
      if (detail === 'transcript') {
        // Every run of the child session (a follow-up continues it): the messages sent to each show where they arrived.
        const ofChild = (await services.store.listRuns({ parent_session_id: run.parent_session_id })).filter(
          (each) => each.child_session_id === run.child_session_id,
        );
        const withEvents = await Promise.all(
          ofChild.map(async (each) => ({ run: each, events: each.messages ? await services.store.listRunEvents(each.id) : [] })),
        );
        const transcript = renderTranscript(await services.store.listMessages(run.child_session_id), sentMessagesBySeq(withEvents));
        return formatRunOutput(run, { maxResultChars: services.limits.maxResultChars * 4, body: transcript });
      }
      return formatRunOutput(run, format);
    },
  });
}

async function describeProgress(services: DelegationServices, run: RunRecord): Promise<string> {
  const events = await services.store.listRunEvents(run.id);
  const recent = events.slice(-5).map((event) => {
    const detail = describeStoredRunEvent(event);
    return `- ${event.at} ${event.type}${detail ? ` ${detail}` : ''}`;
  });
  const { pending, delivered } = messageCounts(run);
  return [
    `Elapsed: ${formatElapsed(run, services.now())}, turns so far: ${run.turns}, tokens: ${run.usage.input_tokens} input, ${run.usage.output_tokens} output`,
    `Latest activity: ${run.last_activity ?? 'none yet'}`,
    ...(pending + delivered > 0 ? [`Messages sent to it: ${delivered} delivered, ${pending} waiting for its next model call`] : []),
    'Last events:',
    ...recent,
  ].join('\n');
}
