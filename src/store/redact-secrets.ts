const marker = '[REDACTED]';

/** A cheap test that a text may hold a pattern's match. */
type Guard = (text: string) => boolean;

/**
 * A guard true when the text holds any of `parts`, searched one by one as literal regexes (V8
 * searches a lone literal far faster than `includes` or an alternation, and allocates nothing).
 */
function anyOf(parts: string[], flags = ''): Guard {
  const searches = parts.map((part) => new RegExp(part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), flags));
  return (text) => searches.some((search) => search.test(text));
}

// Shapes of well-known credentials, narrow enough not to eat ordinary text or code. Each has a
// guard made of plain substring searches, so text without a hint of a credential (most model
// output and tool results) costs a few searches instead of every pattern's scan.
const patterns: ReadonlyArray<[Guard, RegExp, string]> = [
  [anyOf(['PRIVATE KEY']), /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, `[REDACTED PRIVATE KEY]`],
  [anyOf(['sk-']), /\bsk-[A-Za-z0-9_-]{20,}/g, marker],
  [anyOf(['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_']), /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})/g, marker],
  [anyOf(['AKIA']), /\bAKIA[0-9A-Z]{16}\b/g, marker],
  [anyOf(['xox']), /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, marker],
  [anyOf(['AIza']), /\bAIza[0-9A-Za-z_-]{35}/g, marker],
  [anyOf(['authorization'], 'i'), /(\bauthorization["']?\s*[:=]\s*["']?)[^"'\r\n]+/gi, `$1${marker}`],
  [anyOf(['Bearer', 'Basic']), /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{12,}/g, `$1 ${marker}`],
  [
    anyOf(['KEY', 'SECRET', 'TOKEN', 'PASSWORD']),
    /\b([A-Z][A-Z0-9_]*(?:API_KEY|SECRET|TOKEN|PASSWORD|ACCESS_KEY)[A-Z0-9_]*)(\s*[=:]\s*["']?)[^\s"']{6,}/g,
    `$1$2${marker}`,
  ],
  [
    anyOf(['key', 'secret', 'passw', 'token'], 'i'),
    /(["']?\b(?:api[_-]?key|apikey|secret|password|passwd|access[_-]?token|auth[_-]?token|client[_-]?secret)["']?\s*[:=]\s*["'])[^"'\r\n]{6,}/gi,
    `$1${marker}`,
  ],
  [anyOf(['://']), /\b([a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:)[^/\s@]+@/gi, `$1${marker}@`],
];

/**
 * A search for a hint of any pattern above (a superset of every pattern's own guard): text
 * without one, most model output and tool results, costs these two scans and nothing else. The
 * hints whose patterns match one case only are searched as they are; the others letter by letter
 * in either case, which V8 scans about twice as fast as one alternation under the `i` flag
 * (8.6 -> 3.7 µs on 2,000 characters of prose, 5.4 -> 3.1 µs on code). `PRIVATE KEY` and the
 * upper-case names are found by `key`, `secret`, `token` and `passw`.
 */
const oneCaseHint = /sk-|gh[pousr]_|github_pat_|AKIA|xox|AIza|Bearer|Basic|:\/\//;
const eitherCaseHint = /[aA][uU][tT][hH][oO][rR][iI][zZ][aA][tT][iI][oO][nN]|[kK][eE][yY]|[sS][eE][cC][rR][eE][tT]|[pP][aA][sS][sS][wW]|[tT][oO][kK][eE][nN]/;
const anyHint = { test: (text: string) => oneCaseHint.test(text) || eitherCaseHint.test(text) };

/**
 * Text with anything that looks like a credential (API keys, `Authorization` values, tokens,
 * passwords in URLs or assignments, private keys) replaced by `[REDACTED]`. Exports and logs
 * pass through it: a tool may have read a `.env` file into the conversation.
 *
 * @example
 * redactSecrets('OPENAI_API_KEY=sk-abc...') // 'OPENAI_API_KEY=[REDACTED]'
 */
export function redactSecrets(text: string): string {
  if (!anyHint.test(text)) return text;
  let result = text;
  for (const [guard, pattern, replacement] of patterns) if (guard(result)) result = result.replace(pattern, replacement);
  return result;
}

/** A copy of a JSON-like value with `redactSecrets` applied to every string in it. */
export function redactSecretsDeep<T>(value: T): T {
  if (typeof value === 'string') return redactSecrets(value) as T;
  if (Array.isArray(value)) return value.map((item) => redactSecretsDeep(item)) as T;
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = redactSecretsDeep(item);
    return copy as T;
  }
  return value;
}
