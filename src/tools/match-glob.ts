function escape(character: string): string {
  return /[.+^${}()|[\]\\]/.test(character) ? `\\${character}` : character;
}

/**
 * A matcher for a glob on `/`-separated relative paths: `*` and `?` stay within one path segment,
 * `**` spans segments, `{a,b}` picks one. A pattern without `/` is matched against the file name
 * alone, so `*.ts` finds TypeScript files at any depth.
 * @example matchGlob('src/**\/*.ts')('src/tools/grep-tool.ts') // true
 */
export function matchGlob(pattern: string): (path: string) => boolean {
  const byName = !pattern.includes('/');
  let source = '';
  let braces = 0;
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index];
    if (character === '*' && pattern[index + 1] === '*') {
      const slashAfter = pattern[index + 2] === '/';
      source += slashAfter ? '(?:.*/)?' : '.*';
      index += slashAfter ? 2 : 1;
    } else if (character === '*') source += '[^/]*';
    else if (character === '?') source += '[^/]';
    else if (character === '{') {
      braces++;
      source += '(?:';
    } else if (character === '}' && braces > 0) {
      braces--;
      source += ')';
    } else if (character === ',' && braces > 0) source += '|';
    else source += escape(character);
  }
  if (braces > 0) throw new Error(`Unclosed '{' in the pattern '${pattern}'.`);
  const expression = new RegExp(`^${source}$`);
  return (path) => expression.test(byName ? path.slice(path.lastIndexOf('/') + 1) : path);
}
