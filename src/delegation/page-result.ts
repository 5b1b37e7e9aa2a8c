import { ToolInputError } from '../tools/define-tool.ts';

/** One page of a long text: characters `start` (inclusive) to `end` (exclusive) of `total`. */
export interface ResultPage {
  text: string;
  start: number;
  end: number;
  total: number;
}

/**
 * Cuts one page out of a run's full result, `limit` characters from `offset`, never splitting a
 * surrogate pair (a page that would end inside one ends before it).
 * @throws {ToolInputError} for an offset past the end, with what would be valid.
 * @example pageResult(text, { offset: 8000, limit: 8000 })
 */
export function pageResult(text: string, { offset, limit }: { offset: number; limit: number }): ResultPage {
  const total = text.length;
  if (offset >= total && !(offset === 0 && total === 0)) {
    throw new ToolInputError(
      `offset: ${offset} is past the end of the result, which has ${total} characters; use an offset from 0 to ${Math.max(0, total - 1)}.`,
    );
  }
  let start = offset;
  // An offset inside a pair starts at the pair.
  if (start > 0 && isLowSurrogate(text.charCodeAt(start)) && isHighSurrogate(text.charCodeAt(start - 1))) start--;
  let end = Math.min(total, start + limit);
  if (end < total && end > start + 1 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
  return { text: text.slice(start, end), start, end, total };
}

/** The note under a page: where it sits in the whole and how to read on. */
export function describePage(page: ResultPage): string {
  const where = `Characters ${page.start}–${page.end} of ${page.total} of the full result.`;
  return page.end < page.total ? `${where} Call agent_output with offset: ${page.end} for the next page.` : `${where} This is the end.`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
