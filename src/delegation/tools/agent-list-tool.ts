import { z } from 'zod';
import { messageCounts } from '../../runs/run-inbox.ts';
import { runStatuses, type RunRecord, type RunStatus } from '../../store/records.ts';
import { defineTool } from '../../tools/define-tool.ts';
import { totalTokens } from '../../runs/token-budget.ts';
import type { DelegationScope, DelegationServices } from '../delegation-services.ts';
import { formatElapsed, isUnread } from '../run-views.ts';
import { readDescription } from './read-description.ts';

const inputSchema = z.object({
  status: z.enum(['active', 'all', ...runStatuses], { error: `must be active, all, or one of ${runStatuses.join(', ')}` }).optional(),
  limit: z.number().int('must be a whole number').min(1, 'must be at least 1').max(100, 'must be at most 100').optional(),
});

/** The `agent_list` tool: the runs of this session, newest first. */
export function createAgentListTool(services: DelegationServices, scope: DelegationScope) {
  return defineTool({
    name: 'agent_list',
    // Made of runs' results, records and transcripts, which were redacted as they were written.
    carriesSecrets: false,
    description: readDescription('agent-list.txt'),
    inputSchema,
    execute: async ({ status = 'active', limit = 20 }) => {
      const all = await services.store.listRuns({ parent_session_id: scope.sessionId, order: 'newest' });
      const matching = all.filter((run) => {
        if (status === 'all') return true;
        if (status === 'active') return run.status === 'queued' || run.status === 'running' || isUnread(run);
        return run.status === (status as RunStatus);
      });
      if (matching.length === 0) return '(no subagents match)';
      const now = services.now();
      const runBudget = services.budget.limits.maxTokensPerRun;
      const runTokens = (run: RunRecord) => `${totalTokens(run.usage)}${runBudget === undefined ? '' : ` of ${runBudget}`}`;
      const lines = matching
        .slice(0, limit)
        .map((run) =>
          [
            run.id,
            `${run.status}${isUnread(run) ? ' (unread)' : ''}`,
            run.agent,
            run.description,
            formatElapsed(run, now),
            `latest: ${run.last_activity ?? '-'}`,
            `tokens: ${runTokens(run)}`,
            ...(run.messages ? [describeMessages(run)] : []),
          ].join(' | '),
        );
      const input = all.reduce((sum, run) => sum + run.usage.input_tokens, 0);
      const output = all.reduce((sum, run) => sum + run.usage.output_tokens, 0);
      let footer = `(usage of all ${all.length} runs of this session: ${input} input, ${output} output tokens)`;
      const sessionBudget = services.budget.limits.maxTokensPerSession;
      if (sessionBudget !== undefined) {
        const session = await services.budget.sessionTokens(scope.sessionId);
        footer += `\n(session budget: ${session.total} of ${sessionBudget} tokens used, primary agent and all runs included${session.total >= sessionBudget ? '; spent: no new run starts' : ''})`;
      }
      return `${lines.join('\n')}\n${footer}`;
    },
  });
}

/** The messages sent to a run, on its line: how many reached it and how many wait. */
function describeMessages(run: RunRecord): string {
  const { pending, delivered } = messageCounts(run);
  return `messages: ${delivered} delivered${pending > 0 ? `, ${pending} pending` : ''}`;
}
