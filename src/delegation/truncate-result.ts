/** The text a parent sees of a long result, and what was cut. */
export interface TruncatedText {
  text: string;
  truncated: boolean;
  originalLength: number;
  omitted: number;
}

/**
 * Cuts `text` to about `maxChars`, keeping the head (65% of the budget) and the tail (35%),
 * cut at white space and never inside a surrogate pair, with
 * `[...N characters omitted...]` between them, where N is the true number dropped.
 *
 * @example truncateResult(longText, { maxChars: 8000 })
 */
export function truncateResult(text: string, { maxChars = 8000 }: { maxChars?: number } = {}): TruncatedText {
  if (text.length <= maxChars) return { text, truncated: false, originalLength: text.length, omitted: 0 };
  const headBudget = Math.floor(maxChars * 0.65);
  const tailBudget = maxChars - headBudget;
  const headEnd = cutBackToWhiteSpace(text, headBudget);
  // The tail starts past the head: text.length - tailBudget > headBudget >= headEnd.
  const tailStart = cutForwardToWhiteSpace(text, text.length - tailBudget);
  const omitted = tailStart - headEnd;
  const head = text.slice(0, headEnd).trimEnd();
  const tail = text.slice(tailStart).trimStart();
  return {
    text: `${head}\n\n[...${omitted} characters omitted...]\n\n${tail}`,
    truncated: true,
    originalLength: text.length,
    omitted,
  };
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function isWhiteSpace(character: string): boolean {
  return /\s/.test(character);
}

/** An index ≤ `end` (< `text.length`) that does not split a pair, preferring the last white space in the final 20%. */
function cutBackToWhiteSpace(text: string, end: number): number {
  const floor = Math.floor(end * 0.8);
  for (let index = end; index > floor; index--) {
    if (isWhiteSpace(text[index])) return index;
  }
  return isLowSurrogate(text.charCodeAt(end)) ? end - 1 : end;
}

/** An index ≥ `start` (< `text.length`) that does not split a pair, preferring white space in the next 20%. */
function cutForwardToWhiteSpace(text: string, start: number): number {
  const ceiling = start + Math.ceil((text.length - start) * 0.2);
  for (let index = start; index < ceiling; index++) {
    if (isWhiteSpace(text[index])) return index;
  }
  return isLowSurrogate(text.charCodeAt(start)) ? start + 1 : start;
}

/**
 * Cuts `text` to at most `maxChars` at a word boundary (for the parent's `context`).
 */
export function cutAtWordBoundary(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, cutBackToWhiteSpace(text, maxChars)).trimEnd()} …`;
}
