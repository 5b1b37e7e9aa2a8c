import { codeSpan, cutEnd, cutMiddle, fencedBlock, formatDuration, inlineText, millisecondsBetween, oneLine } from '../store/markdown-text.ts';
import { cacheTokensText } from './cache-tokens-text.ts';
import type { ExportedRun, ExportedRunEvent } from './session-export.ts';

const maxShownChars = 2000;
const maxTimelineEvents = 100;
const numbers = new Intl.NumberFormat('en-US');

/** One run and, under deeper headings, the runs it started. */
export function renderRunMarkdown(run: ExportedRun, headingLevel: number): string {
  const hashes = '#'.repeat(Math.min(6, headingLevel));
  const sections = [
    `${hashes} Run ${inlineText(run.id)} · ${inlineText(run.agent)} · ${inlineText(run.status)}`,
    facts(run).join('\n'),
    `**Task**\n\n${fencedBlock(cutMiddle(run.task, maxShownChars))}`,
  ];
  if (run.context) sections.push(`**Context from parent**\n\n${fencedBlock(cutMiddle(run.context, maxShownChars))}`);
  if (run.messages && run.messages.length > 0) sections.push(`**Messages sent to it**\n\n${run.messages.map(sentMessage).join('\n')}`);
  sections.push(`**Timeline**\n\n${timeline(run)}`);
  sections.push(outcome(run));
  for (const nested of run.runs) sections.push(renderRunMarkdown(nested, headingLevel + 1));
  return sections.join('\n\n');
}

/** A message sent to the run, where it arrived (its place in the child's transcript is in the timeline's `message-deliver`). */
function sentMessage(message: NonNullable<ExportedRun['messages']>[number]): string {
  const from = message.from === 'person' ? 'a person' : 'the parent';
  const where =
    message.delivered_at === null
      ? 'pending'
      : message.delivered_to === 'task'
        ? `added to the task at ${inlineText(message.delivered_at)}`
        : `delivered at ${inlineText(message.delivered_at)}`;
  return `- From ${from}${message.interrupt ? ' (interrupting)' : ''} at ${inlineText(message.sent_at)}, ${where}: ${inlineText(oneLine(cutEnd(message.text, 300)))}`;
}

function facts(run: ExportedRun): string[] {
  const lines = [
    `- Status: ${inlineText(run.status)}`,
    `- Agent: ${inlineText(run.agent)}`,
    `- Description: ${inlineText(run.description)}`,
    `- Mode: ${inlineText(run.mode)}${run.promoted_at ? ` (promoted to background at ${inlineText(run.promoted_at)})` : ''}`,
    `- Depth: ${run.depth}${run.parent_run_id ? `, started by run ${inlineText(run.parent_run_id)}` : ''}`,
    `- Timing: created ${inlineText(run.created_at)}, started ${inlineText(run.started_at ?? '-')}, ended ${inlineText(run.ended_at ?? '-')}${elapsed(run)}`,
    `- Turns: ${run.turns} of ${run.max_turns}`,
    `- Usage: ${numbers.format(run.usage.input_tokens)} input tokens, ${numbers.format(run.usage.output_tokens)} output tokens${cacheTokensText(run.usage, numbers.format)}`,
  ];
  if (run.resumed_from) lines.push(`- Resumed from: ${inlineText(run.resumed_from)}`);
  if (run.harness)
    lines.push(`- Agent program: ${inlineText(run.harness.name)}${run.harness.session_id ? `, its session ${inlineText(run.harness.session_id)}` : ''}`);
  if (run.usage.cost_usd !== undefined) lines.push(`- Cost reported by the program: $${run.usage.cost_usd.toFixed(4)}`);
  if (run.forked_from) lines.push(`- Forked from: ${inlineText(run.forked_from)} (its conversation so far)`);
  if (run.last_activity) lines.push(`- Last activity: ${inlineText(run.last_activity)}`);
  if (run.warnings.length > 0) {
    lines.push(`- Warnings: ${run.warnings.map((warning) => `${inlineText(warning.kind)} at ${inlineText(warning.at)}`).join('; ')}`);
  }
  if (run.notification) {
    const { delivered_at: deliveredAt, suppressed } = run.notification;
    const state = suppressed ? 'suppressed' : deliveredAt ? `delivered at ${inlineText(deliveredAt)}` : 'pending';
    lines.push(`- Notification: ${state}`);
  }
  if (run.consumed_at) lines.push(`- Result read by the parent at ${inlineText(run.consumed_at)}`);
  if (run.error) lines.push(`- Error: ${inlineText(run.error.kind)}: ${inlineText(run.error.message)}`);
  return lines;
}

function elapsed(run: ExportedRun): string {
  const milliseconds = millisecondsBetween(run.started_at ?? run.created_at, run.ended_at);
  return milliseconds === null ? '' : `, elapsed ${formatDuration(milliseconds)}`;
}

function timeline(run: ExportedRun): string {
  if (run.events.length === 0) return '_(no events)_';
  const origin = run.created_at;
  const line = (event: ExportedRunEvent) => {
    const offset = millisecondsBetween(origin, event.at);
    const when = offset === null ? inlineText(event.at) : `+${formatDuration(offset)}`;
    const detail = eventDetail(event);
    return `- ${when} ${event.type}${detail ? ` ${detail}` : ''}`;
  };
  if (run.events.length <= maxTimelineEvents) return run.events.map(line).join('\n');
  const half = maxTimelineEvents / 2;
  return [...run.events.slice(0, half).map(line), `- _(${run.events.length - maxTimelineEvents} events omitted)_`, ...run.events.slice(-half).map(line)].join(
    '\n',
  );
}

/** The useful part of an event's data, on one short line. */
function eventDetail(event: ExportedRunEvent): string {
  const data = event.data ?? {};
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  switch (event.type) {
    case 'tool-call-start': {
      const tool = text(data.tool);
      const label = text(data.label);
      return inlineText(label.startsWith(tool) ? label : `${tool} ${label}`);
    }
    case 'tool-call-end':
      return inlineText(`${text(data.tool)} ${data.ok === false ? 'failed' : 'ok'}`);
    case 'activity':
      return inlineText(cutEnd(text(data.text), 120));
    case 'warning':
      return inlineText(text(data.kind));
    case 'run-end':
      return inlineText(text(data.status));
    case 'approval-request':
      return inlineText(`${cutEnd(text(data.summary), 120)} (${text(data.approval_id)})`);
    case 'approval-resolve':
      return inlineText(`${text(data.decision)} by ${text(data.by)} (${text(data.approval_id)})`);
    default: {
      const json = JSON.stringify(data) ?? '';
      return json === '{}' ? '' : codeSpan(cutEnd(oneLine(json), 120));
    }
  }
}

function outcome(run: ExportedRun): string {
  if (run.result?.value !== undefined) {
    return `**Value** (output: json, ${numbers.format(run.result.original_length)} characters, matched its output_schema)\n\n${fencedBlock(cutMiddle(run.result.text, maxShownChars), 'json')}`;
  }
  if (run.result) {
    const { text, truncated, original_length: length } = run.result;
    const { summarized, summary, summary_error: summaryError } = run.result;
    const note = summarized ? ', summarized for the parent' : truncated ? `, cut to the result limit when the parent read it` : '';
    const full = `**Result** (${numbers.format(length)} characters${note})\n\n${fencedBlock(cutMiddle(text, maxShownChars))}`;
    if (summarized && summary) return `**Summary the parent got** (${numbers.format(summary.length)} characters)\n\n${fencedBlock(summary)}\n\n${full}`;
    return summaryError ? `_No summary: ${summaryError}._\n\n${full}` : full;
  }
  if (run.partial_result) {
    return `**Partial result** (the last text before the run ended)\n\n${fencedBlock(cutMiddle(run.partial_result, maxShownChars))}`;
  }
  return '_No result._';
}
