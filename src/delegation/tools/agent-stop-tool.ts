import { z } from 'zod';
import { isFinished } from '../../store/records.ts';
import { ToolInputError, defineTool } from '../../tools/define-tool.ts';
import type { DelegationScope, DelegationServices } from '../delegation-services.ts';
import { formatRunOutput } from '../format-run-output.ts';
import { consumeRun, noSuchRun } from '../run-views.ts';
import { readDescription } from './read-description.ts';

const inputSchema = z.object({ run_id: z.string().min(1, 'is required'), reason: z.string().optional() });

/** The `agent_stop` tool: the parent model stops one of its runs (and what that run started). */
export function createAgentStopTool(services: DelegationServices, scope: DelegationScope) {
  return defineTool({
    name: 'agent_stop',
    // Made of runs' results, records and transcripts, which were redacted as they were written.
    carriesSecrets: false,
    description: readDescription('agent-stop.txt'),
    inputSchema,
    execute: async ({ run_id: runId, reason }) => {
      const run = await services.store.getRun(runId);
      if (!run || run.parent_session_id !== scope.sessionId) throw new ToolInputError(noSuchRun(runId));
      const format = { maxResultChars: services.limits.maxResultChars };
      if (isFinished(run.status)) {
        return formatRunOutput(await consumeRun(services, run, 'agent_stop'), {
          ...format,
          note: `This run had already finished as ${run.status}; nothing was stopped.`,
        });
      }
      const stopped = (await services.runs.stop(runId, 'parent', reason)) ?? run;
      const consumed = await consumeRun(services, stopped, 'agent_stop');
      const note =
        consumed.status === 'canceled_by_parent' ? 'Stopped, with the runs it started.' : `It finished as ${consumed.status} before the stop took effect.`;
      return formatRunOutput(consumed, { ...format, note });
    },
  });
}
