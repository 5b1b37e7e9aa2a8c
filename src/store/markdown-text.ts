/** Helpers that put arbitrary text into Markdown without letting it change the structure. */

/** A fenced block that no backtick run inside `text` can close early. */
export function fencedBlock(text: string, language = 'text'): string {
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(text) + 1));
  const body = text.endsWith('\n') ? text : `${text}\n`;
  return `${fence}${language}\n${body}${fence}`;
}

/** An inline code span for one line of text, whatever backticks it holds. */
export function codeSpan(text: string): string {
  const line = oneLine(text);
  const fence = '`'.repeat(longestBacktickRun(line) + 1);
  const padding = line.startsWith('`') || line.endsWith('`') ? ' ' : '';
  return `${fence}${padding}${line}${padding}${fence}`;
}

/**
 * Free text for a list item or heading: one line, with the characters that would start
 * emphasis, links, code or HTML escaped. Underscores inside words stay as they are
 * (`read_file`), since Markdown ignores them there.
 */
export function inlineText(text: string): string {
  return oneLine(text)
    .replace(/[\\`*<>[\]|~]/g, '\\$&')
    .replace(/&(?=#?[A-Za-z0-9]+;)/g, '\\&')
    .replace(/(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])/g, '\\_');
}

/**
 * Matches exactly where `oneLine` would change a string: white space other than a space, two
 * spaces in a row, or a space at either end. Most lines have none, and are then returned as they
 * are: the replace builds a new string from every run of white space, which for the activity of
 * a long answer is most of the garbage it makes.
 */
const untidySpace = /[^\S ]| {2}|^ | $/;

/** Text on one line: runs of white space, newlines included, become one space. */
export function oneLine(text: string): string {
  return untidySpace.test(text) ? text.replace(/\s+/g, ' ').trim() : text;
}

/** The first `max` characters, then a note of how many were dropped. */
export function cutEnd(text: string, max: number, separator = ' '): string {
  if (text.length <= max) return text;
  const end = safeIndex(text, max);
  return `${text.slice(0, end)}${separator}[... ${text.length - end} characters omitted ...]`;
}

/**
 * Text longer than `max` as its head (65%) and tail (35%) with
 * `[... N characters omitted ...]` between, N being the true number dropped.
 */
export function cutMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const headEnd = safeIndex(text, Math.floor(max * 0.65));
  const tailStart = safeIndex(text, text.length - Math.floor(max * 0.35));
  return `${text.slice(0, headEnd)}\n[... ${tailStart - headEnd} characters omitted ...]\n${text.slice(tailStart)}`;
}

/** A duration for people: `0.4s`, `12.3s`, `2m 05s`, `1h 02m`. */
export function formatDuration(milliseconds: number): string {
  const seconds = Math.max(0, milliseconds) / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(Math.floor(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}

/** Milliseconds from one ISO time to another; null when either is missing or unreadable. */
export function millisecondsBetween(from: string | null, to: string | null): number | null {
  if (!from || !to) return null;
  const difference = Date.parse(to) - Date.parse(from);
  return Number.isFinite(difference) ? difference : null;
}

function longestBacktickRun(text: string): number {
  let longest = 0;
  for (const match of text.matchAll(/`+/g)) longest = Math.max(longest, match[0].length);
  return longest;
}

/** `index`, moved back one if it would split a surrogate pair. */
function safeIndex(text: string, index: number): number {
  const code = text.charCodeAt(index - 1);
  return code >= 0xd800 && code <= 0xdbff ? index - 1 : index;
}
