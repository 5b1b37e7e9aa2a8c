import { inlineText } from '../store/markdown-text.ts';
import { redactSecrets } from '../store/redact-secrets.ts';
import { cacheTokensText } from './cache-tokens-text.ts';
import { renderMessageMarkdown } from './render-message-markdown.ts';
import { renderRunMarkdown } from './render-run-markdown.ts';
import type { ExportedRun, SessionExport } from './session-export.ts';

const numbers = new Intl.NumberFormat('en-US');

/**
 * A session export as a report a person can read or attach to a bug: the session, its
 * conversation, then every run (nested runs under deeper headings) with its facts, a timeline
 * of its events and its result. Stored text goes into fenced blocks so it cannot break the
 * page, and anything that looks like a credential is replaced by `[REDACTED]`.
 *
 * @example
 * writeFileSync('session.md', renderMarkdownExport(await exportSession(store, id)));
 */
export function renderMarkdownExport(document: SessionExport): string {
  const { session } = document;
  const runCount = countRuns(document.runs);
  const sections = [
    `# Session ${inlineText(session.id)}`,
    [
      `- Agent: ${inlineText(session.agent)}`,
      `- Model: ${inlineText(session.model)}`,
      `- Status: ${inlineText(session.status)}`,
      `- Created: ${inlineText(session.created_at)}`,
      `- Exported: ${inlineText(document.exported_at)}`,
      `- Messages: ${document.messages.length}; subagent runs: ${runCount}`,
      `- Subagent usage: ${numbers.format(document.usage.input_tokens)} input tokens, ${numbers.format(document.usage.output_tokens)} output tokens${cacheTokensText(document.usage, numbers.format)}`,
      `- Primary agent usage: ${numbers.format(document.agent_usage.input_tokens)} input tokens, ${numbers.format(document.agent_usage.output_tokens)} output tokens${cacheTokensText(document.agent_usage, numbers.format)}`,
      ...budgetLines(document),
    ].join('\n'),
    '## Conversation',
  ];
  if (document.messages.length === 0) sections.push('_(no messages)_');
  for (const message of document.messages) sections.push(renderMessageMarkdown(message, 3));
  sections.push('## Runs');
  if (document.runs.length === 0) sections.push('_(no subagent runs)_');
  for (const run of document.runs) sections.push(renderRunMarkdown(run, 3));
  return `${redactSecrets(sections.join('\n\n'))}\n`;
}

function budgetLines({ token_budgets: budgets }: SessionExport): string[] {
  if (!budgets) return [];
  const perRun = budgets.max_tokens_per_run === null ? 'none' : `${numbers.format(budgets.max_tokens_per_run)} tokens`;
  const perSession = budgets.max_tokens_per_session === null ? 'none' : `${numbers.format(budgets.max_tokens_per_session)} tokens`;
  return [`- Token budgets: per run ${perRun}; per session ${perSession}`];
}

function countRuns(runs: readonly ExportedRun[]): number {
  return runs.reduce((total, run) => total + 1 + countRuns(run.runs), 0);
}
