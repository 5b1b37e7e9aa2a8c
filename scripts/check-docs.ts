/**
 * Keeps the documentation honest: every relative link of the user-facing Markdown resolves (the
 * file exists, and a `#anchor` names a heading of it), and every `cadre ...` command line in a
 * code block or an inline code span names a real command with real options, checked against the
 * `cadre` program itself (src/cli/main.ts), and code examples import the package, not its sources.
 * `node scripts/check-docs.ts` prints the problems and exits 1; scripts/check-docs.test.ts runs it
 * in `npm test`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { scriptedServerOptions } from '../src/testing/scripted-server-usage.ts';

/** The options of `cadre-scripted-server`, as its command line reads them. */
const scriptedServerFlags = Object.entries(scriptedServerOptions).flatMap(([name, option]) => [
  `--${name}`,
  ...('short' in option ? [`-${option.short}`] : []),
]);

/** The repository's root. */
export const repository = resolve(import.meta.dirname, '..');

/** One problem found, with the file and line it is on. */
export interface DocProblem {
  file: string;
  line: number;
  message: string;
}

/**
 * Pages linked from the docs that another branch writes. Each entry must not exist yet: once the
 * page lands, the check fails until its entry is removed, so the exception cannot outlive its reason.
 */
export const pendingPages: readonly string[] = [];

/** The Markdown files a user reads: README.md, docs/**, bench/README.md, examples/**\/README.md. */
export function documentationFiles(root: string = repository): string[] {
  const walk = (directory: string): string[] =>
    readdirSync(join(root, directory), { withFileTypes: true }).flatMap((entry) => {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(path);
      return entry.name.endsWith('.md') ? [path] : [];
    });
  const examples = existsSync(join(root, 'examples')) ? walk('examples').filter((path) => path.endsWith('README.md')) : [];
  return ['README.md', ...(existsSync(join(root, 'docs')) ? walk('docs') : []), 'bench/README.md', ...examples].filter((path) => existsSync(join(root, path)));
}

interface Block {
  language: string;
  /** The block's lines, with the line number of each in the file. */
  lines: { text: string; line: number }[];
}

/** A Markdown file split into fenced code blocks and the prose around them (code blocks blanked). */
export function splitMarkdown(text: string): { prose: string[]; blocks: Block[] } {
  const prose: string[] = [];
  const blocks: Block[] = [];
  let open: Block | undefined;
  text.split('\n').forEach((content, index) => {
    const fence = /^\s*```(\S*)/.exec(content);
    if (fence && open === undefined) {
      open = { language: fence[1].toLowerCase(), lines: [] };
      prose.push('');
    } else if (fence) {
      blocks.push(open!);
      open = undefined;
      prose.push('');
    } else if (open) {
      open.lines.push({ text: content, line: index + 1 });
      prose.push('');
    } else {
      prose.push(content);
    }
  });
  return { prose, blocks };
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a Markdown file offers: its headings (GitHub numbers repeated ones) and `<a id>`s. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of splitMarkdown(text).prose) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = headingAnchor(heading[1]);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  }
  return anchors;
}

/** Inline code spans of a prose line, with the text outside them. */
function codeSpans(line: string): { spans: string[]; outside: string } {
  const spans: string[] = [];
  const outside = line.replace(/(`+)(.+?)\1/g, (_whole, _ticks, code: string) => {
    spans.push(code.trim());
    return ' ';
  });
  return { spans, outside };
}

/** Problems with the relative links of one file (`path` relative to `root`). */
export function checkLinks(path: string, root: string = repository): DocProblem[] {
  const text = readFileSync(join(root, path), 'utf8');
  const problems: DocProblem[] = [];
  splitMarkdown(text).prose.forEach((line, index) => {
    const { outside } = codeSpans(line);
    const targets = [...outside.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g), ...outside.matchAll(/<(?:img|a)\s[^>]*(?:src|href)="([^"]+)"/g)].map(
      (match) => match[1],
    );
    for (const target of targets) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [file, anchor] = target.split('#', 2) as [string, string | undefined];
      const resolved = file === '' ? join(root, path) : resolve(dirname(join(root, path)), decodeURIComponent(file));
      const shown = relative(root, resolved);
      const report = (message: string) => problems.push({ file: path, line: index + 1, message });
      if (!existsSync(resolved)) {
        if (!pendingPages.includes(shown)) report(`link to ${target}: ${shown} does not exist`);
        continue;
      }
      if (
        anchor !== undefined &&
        anchor !== '' &&
        statSync(resolved).isFile() &&
        resolved.endsWith('.md') &&
        !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)
      ) {
        report(`link to ${target}: ${shown} has no heading #${anchor}`);
      }
    }
  });
  return problems;
}

/** Splits a shell line into words, honouring quotes; `|`, `;`, `&&`, `||` become their own words. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | undefined;
  let started = false;
  const end = () => {
    if (started) words.push(word);
    word = '';
    started = false;
  };
  for (let index = 0; index < line.length; index++) {
    const char = line[index];
    if (quote) {
      if (char === quote) quote = undefined;
      else word += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      started = true;
    } else if (/\s/.test(char)) {
      end();
    } else if (char === '#' && !started) {
      break; // a comment
    } else if ((char === '|' || char === ';' || char === '&') && !started) {
      const double = line[index + 1] === char ? char : '';
      end();
      words.push(char + double);
      index += double.length;
    } else {
      word += char;
      started = true;
    }
  }
  end();
  return words;
}

const separators = new Set(['|', '||', '&&', ';', '&']);

/** The arguments after each `cadre` a shell line runs (`cadre ...`, `npx cadre ...`, `npx -y cadre ...`). */
export function cadreInvocations(line: string): string[][] {
  const words = shellWords(line);
  const invocations: string[][] = [];
  let start = 0;
  for (let index = 0; index <= words.length; index++) {
    if (index < words.length && !separators.has(words[index])) continue;
    const command = words.slice(start, index);
    start = index + 1;
    let at = 0;
    while (at < command.length && /^[A-Z_][A-Z0-9_]*=/.test(command[at])) at++; // VAR=value
    if (['exec', 'time'].includes(command[at] ?? '')) at++;
    // `npx cadre`, `npx -y cadre`, also after `--` (claude mcp add cadre -- npx -y cadre mcp)
    const dashes = command.indexOf('--');
    if (command[at] !== 'cadre' && command[at] !== 'npx' && dashes >= 0) at = dashes + 1;
    if (command[at] === 'npx') {
      at++;
      while (at < command.length && command[at].startsWith('-')) at++;
    }
    if (command[at] === 'cadre') invocations.push(command.slice(at + 1));
  }
  return invocations;
}

/** Why the arguments of one `cadre` invocation are not real, or nothing. Placeholders pass. */
export function checkInvocation(program: Command, args: readonly string[]): string | undefined {
  let command = program;
  const commands = [program];
  for (let index = 0; index < args.length; index++) {
    // Synopsis notation: [--flag VALUE], (a|b), --flag... are read as the flag.
    const arg = args[index].replace(/^[[(]+/, '').replace(/(\.\.\.|…|[\])])+$/, '');
    if (arg === '' || arg === '...' || arg === '…' || arg === '--') continue;
    if (arg.startsWith('-') && arg !== '-') {
      const name = arg.split('=')[0];
      const option = commands.flatMap((each) => each.options).find((candidate) => candidate.long === name || candidate.short === name);
      if (option === undefined)
        return `cadre ${commands
          .slice(1)
          .map((each) => each.name())
          .join(' ')}${commands.length > 1 ? ' ' : ''}has no option ${name}`;
      if ((option.required || option.optional) && !arg.includes('=')) index++;
      continue;
    }
    if (command.commands.length > 0 && command.registeredArguments.length === 0 && !/^[A-Z_|.]+$/.test(arg)) {
      const sub = command.commands.find((candidate) => candidate.name() === arg || candidate.aliases().includes(arg));
      if (sub === undefined && arg !== 'help')
        return `cadre has no command ${commands
          .slice(1)
          .map((each) => `${each.name()} `)
          .join('')}${arg}`;
      if (sub) {
        command = sub;
        commands.push(sub);
      }
    }
  }
  return undefined;
}

/** Problems with the `cadre` and `cadre-scripted-server` command lines of one file: in shell code blocks and inline code spans. */
export function checkCommands(path: string, program: Command, root: string = repository): DocProblem[] {
  const text = readFileSync(join(root, path), 'utf8');
  const { prose, blocks } = splitMarkdown(text);
  const problems: DocProblem[] = [];
  const check = (line: string, number: number) => {
    for (const args of cadreInvocations(line)) {
      const problem = checkInvocation(program, args);
      if (problem) problems.push({ file: path, line: number, message: `${problem}: ${line.trim()}` });
    }
    const words = shellWords(line);
    const server = words.indexOf('cadre-scripted-server');
    if (server >= 0) {
      const rest = words.slice(server + 1);
      const end = rest.findIndex((word) => separators.has(word));
      for (const word of end < 0 ? rest : rest.slice(0, end)) {
        const name = word.replace(/^\[+/, '').split(/[=\]]/)[0];
        if (name.startsWith('-') && !scriptedServerFlags.includes(name))
          problems.push({ file: path, line: number, message: `cadre-scripted-server has no option ${name}: ${line.trim()}` });
      }
    }
  };
  for (const block of blocks) {
    if (!['', 'sh', 'bash', 'shell', 'console', 'zsh', 'text'].includes(block.language)) continue;
    // Pictures (box-drawing characters) name commands without running them.
    for (const { text: line, line: number } of block.lines) if (!/[\u2500-\u257f]/.test(line)) check(line.replace(/^\$\s+/, ''), number);
  }
  prose.forEach((line, index) => {
    for (const span of codeSpans(line).spans) if (/^(npx (-y )?)?cadre(-scripted-server)? (-|[a-z])/.test(span)) check(span, index + 1);
  });
  return problems;
}

/** Problems with the imports of code examples: a user imports `cadre`, `cadre/server`, ..., never cadre's `src/`. */
export function checkImports(path: string, root: string = repository): DocProblem[] {
  const { blocks } = splitMarkdown(readFileSync(join(root, path), 'utf8'));
  return blocks
    .filter((block) => ['ts', 'tsx', 'js', 'mjs', 'mts', 'typescript', 'javascript'].includes(block.language))
    .flatMap((block) => block.lines)
    .filter(({ text }) => /\bfrom\s+['"](\.{1,2}\/)+src\//.test(text) || /\bimport\(\s*['"](\.{1,2}\/)+src\//.test(text))
    .map(({ text, line }) => ({
      file: path,
      line,
      message: `an example imports cadre's sources; import from 'cadre' or an entry point like 'cadre/server': ${text.trim()}`,
    }));
}

/** The longest line a page may have, table rows aside (Markdown cannot wrap them). */
export const maxLineLength = 160;

/** Lines longer than {@link maxLineLength} characters, outside tables. */
export function checkLineLengths(path: string, root: string = repository): DocProblem[] {
  return readFileSync(join(root, path), 'utf8')
    .split('\n')
    .flatMap((text, index) =>
      [...text].length > maxLineLength && !text.trimStart().startsWith('|')
        ? [{ file: path, line: index + 1, message: `line of ${[...text].length} characters (at most ${maxLineLength} outside tables)` }]
        : [],
    );
}

/** The `cadre` program as src/cli/main.ts builds it; nothing runs. */
export async function cadreProgram(): Promise<Command> {
  const { createProgram } = await import('../src/cli/main.ts');
  const discard = { write: () => true };
  return createProgram({ cwd: repository, env: {}, stdin: process.stdin, stdout: discard, stderr: discard }, { code: 0 });
}

/** Every problem of the documentation files. */
export async function checkDocs(root: string = repository, files: readonly string[] = documentationFiles(root)): Promise<DocProblem[]> {
  const program = await cadreProgram();
  const landed = pendingPages.filter((page) => existsSync(join(root, page)));
  return [
    ...landed.map((page) => ({ file: 'scripts/check-docs.ts', line: 1, message: `${page} exists now: remove it from pendingPages` })),
    ...files.flatMap((file) => [
      ...checkLinks(file, root),
      ...checkCommands(file, program, root),
      ...checkImports(file, root),
      ...checkLineLengths(file, root),
    ]),
  ];
}

if (import.meta.main) {
  const problems = await checkDocs();
  for (const problem of problems) console.error(`${problem.file}:${problem.line}: ${problem.message}`);
  if (problems.length > 0) process.exit(1);
  console.log(`docs ok: ${documentationFiles().length} files, links and cadre command lines`);
}
