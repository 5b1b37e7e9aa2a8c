import picomatch from 'picomatch';

/**
 * A matcher for a glob on `/`-separated paths relative to the workspace root, by picomatch:
 * `*` and `?` stay within one path segment, `**` spans segments, `[ab]` classes, `{a,b}` and
 * extglobs like `*.@(ts|md)`. A pattern without `/` is matched against the file name alone, so
 * `*.ts` finds TypeScript files at any depth; `*` also matches names starting with a dot.
 *
 * picomatch compiles to a backtracking regular expression, and some globs (`*a*a*a*a*a*b`) take
 * exponential time: match only where a deadline can end it (the search worker).
 * @throws {Error} for a glob picomatch cannot parse.
 * @example matchGlob('src/**\/*.ts')('src/tools/grep-tool.ts') // true
 */
export function matchGlob(pattern: string): (path: string) => boolean {
  return picomatch(pattern, { dot: true, basename: !pattern.includes('/'), strictBrackets: true });
}
