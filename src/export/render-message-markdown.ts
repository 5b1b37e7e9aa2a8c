import { codeSpan, cutEnd, fencedBlock, inlineText } from '../store/markdown-text.ts';
import type { ExportedMessage } from './session-export.ts';

const maxToolInputChars = 200;
const maxToolOutputChars = 500;

type Part = Record<string, unknown> & { type?: unknown };

/**
 * One stored message as Markdown: a heading with its role, text as fenced text, tool calls as
 * `→ tool_name({...})` (input cut to 200 characters) and tool results cut to 500 characters.
 */
export function renderMessageMarkdown(message: ExportedMessage, headingLevel: number): string {
  const heading = `${'#'.repeat(headingLevel)} ${message.seq}. ${inlineText(message.role)} · ${inlineText(message.created_at)}`;
  return [heading, ...renderContent(message.content)].join('\n\n');
}

function renderContent(content: unknown): string[] {
  if (typeof content === 'string') return [fencedBlock(content)];
  if (!Array.isArray(content)) return [fencedBlock(JSON.stringify(content, null, 2) ?? String(content), 'json')];
  if (content.length === 0) return ['_(empty)_'];
  return content.map((part: unknown) => renderPart(typeof part === 'object' && part !== null ? (part as Part) : { type: String(part) }));
}

function renderPart(part: Part): string {
  switch (part.type) {
    case 'text':
      return fencedBlock(String(part.text ?? ''));
    case 'reasoning':
      return `Reasoning:\n\n${fencedBlock(cutEnd(String(part.text ?? ''), maxToolOutputChars, '\n'))}`;
    case 'tool-call': {
      const input = JSON.stringify(part.input ?? part.args ?? {}) ?? '';
      return `→ ${codeSpan(`${String(part.toolName)}(${cutEnd(input, maxToolInputChars)})`)}`;
    }
    case 'tool-result': {
      const { text, failed } = toolOutputText(part.output ?? part.result);
      const label = `← ${codeSpan(String(part.toolName))}${failed ? ' (error)' : ''}`;
      return `${label}\n\n${fencedBlock(cutEnd(text, maxToolOutputChars, '\n'))}`;
    }
    case 'image':
    case 'file':
    case 'reasoning-file': {
      const name = typeof part.filename === 'string' ? ` ${part.filename}` : '';
      return `_(${inlineText(String(part.type))}: ${inlineText(String(part.mediaType ?? 'unknown type'))}${inlineText(name)})_`;
    }
    default:
      return `_(${inlineText(String(part.type ?? 'unknown'))} part)_`;
  }
}

/** The text of an AI SDK tool result output (`text`, `json`, `error-text`, `content`...). */
function toolOutputText(output: unknown): { text: string; failed: boolean } {
  if (typeof output === 'string') return { text: output, failed: false };
  if (typeof output !== 'object' || output === null) return { text: JSON.stringify(output) ?? '', failed: false };
  const typed = output as { type?: unknown; value?: unknown; reason?: unknown };
  switch (typed.type) {
    case 'text':
      return { text: String(typed.value ?? ''), failed: false };
    case 'error-text':
      return { text: String(typed.value ?? ''), failed: true };
    case 'json':
      return { text: JSON.stringify(typed.value) ?? '', failed: false };
    case 'error-json':
      return { text: JSON.stringify(typed.value) ?? '', failed: true };
    case 'execution-denied':
      return { text: `Execution denied${typed.reason ? `: ${String(typed.reason)}` : '.'}`, failed: true };
    case 'content': {
      const items = Array.isArray(typed.value) ? (typed.value as Part[]) : [];
      const text = items.map((item) => (item.type === 'text' ? String(item.text ?? '') : `[${String(item.type)}: ${String(item.mediaType ?? '')}]`));
      return { text: text.join('\n'), failed: false };
    }
    default:
      return { text: JSON.stringify(output) ?? '', failed: false };
  }
}
