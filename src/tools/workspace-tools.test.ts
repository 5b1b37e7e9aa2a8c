import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolSet } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceTools } from './workspace-tools.ts';

let base: string;
let root: string;
let tools: ToolSet;

async function call(name: string, input: Record<string, unknown>): Promise<string> {
  const execute = tools[name].execute!;
  return (await execute(input, { toolCallId: 'call_1', messages: [], context: undefined })) as string;
}

async function failure(name: string, input: Record<string, unknown>): Promise<string> {
  const error = await call(name, input).then(
    () => new Error('expected a tool error'),
    (caught: unknown) => caught as Error,
  );
  return error.message;
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'cadre-tools-'));
  root = join(base, 'workspace');
  await mkdir(join(root, 'src', 'deep'), { recursive: true });
  await mkdir(join(root, 'node_modules', 'dependency'), { recursive: true });
  await mkdir(join(root, '.git'), { recursive: true });
  await writeFile(join(root, 'src', 'a.ts'), 'export const a = 1;\n// TODO: more\n');
  await writeFile(join(root, 'src', 'deep', 'b.ts'), Array.from({ length: 10 }, (_, index) => `line ${index + 1}`).join('\n'));
  await writeFile(join(root, 'README.md'), '# Title\nTODO: write it\n');
  await writeFile(join(root, 'image.bin'), Buffer.from([1, 0, 2, 0]));
  await writeFile(join(root, 'node_modules', 'dependency', 'index.js'), 'TODO hidden');
  await writeFile(join(root, '.git', 'HEAD'), 'TODO hidden');
  await writeFile(join(base, 'secret.txt'), 'outside');
  await symlink(join(base, 'secret.txt'), join(root, 'link.txt'));
  tools = createWorkspaceTools({ root });
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('read_file', () => {
  it('returns numbered lines from offset, at most limit, and says how to read on', async () => {
    expect(await call('read_file', { path: 'src/a.ts' })).toBe('1\texport const a = 1;\n2\t// TODO: more');
    const page = await call('read_file', { path: 'src/deep/b.ts', offset: 3, limit: 2 });
    expect(page).toBe('3\tline 3\n4\tline 4\n(lines 3-4 of 10; call read_file with offset 5 to read on)');
  });

  it('refuses paths outside the root, also through a symbolic link', async () => {
    expect(await failure('read_file', { path: '../secret.txt' })).toMatch(/^Path '..\/secret.txt' is outside the workspace/);
    expect(await failure('read_file', { path: join(base, 'secret.txt') })).toContain('is outside the workspace');
    expect(await failure('read_file', { path: 'link.txt' })).toContain('is outside the workspace');
  });

  it('explains missing files, directories, binary files, a bad offset and bad input', async () => {
    expect(await failure('read_file', { path: 'nope.ts' })).toContain("No such file or directory: 'nope.ts'");
    expect(await failure('read_file', { path: 'src' })).toContain("'src' is a directory");
    expect(await failure('read_file', { path: 'image.bin' })).toContain('binary file');
    expect(await failure('read_file', { path: 'src/a.ts', offset: 9 })).toContain('past the end');
    expect(await failure('read_file', { offset: 0 })).toMatch(/^Invalid input for tool 'read_file': path: .*offset: must be at least 1/);
  });
});

describe('list_files', () => {
  it('lists files recursively, relative to the root, without node_modules, .git or symbolic links', async () => {
    expect((await call('list_files', {})).split('\n')).toEqual(['README.md', 'image.bin', 'src/a.ts', 'src/deep/b.ts']);
    expect(await call('list_files', { path: 'src/deep' })).toBe('src/deep/b.ts');
  });

  it('filters by a glob on names or on paths', async () => {
    expect(await call('list_files', { pattern: '*.ts' })).toBe('src/a.ts\nsrc/deep/b.ts');
    expect(await call('list_files', { pattern: 'src/*.ts' })).toBe('src/a.ts');
    expect(await call('list_files', { pattern: '*.py' })).toBe("(no files match '*.py' under .)");
  });

  it('refuses a directory outside the root', async () => {
    expect(await failure('list_files', { path: '..' })).toContain('is outside the workspace');
  });

  it('stops at the cap with a note', async () => {
    const capped = createWorkspaceTools({ root });
    const { createListFilesTool } = await import('./list-files-tool.ts');
    capped.list_files = createListFilesTool({ root, maxEntries: 2 });
    const output = (await capped.list_files.execute!({}, { toolCallId: 'c', messages: [], context: undefined })) as string;
    expect(output.split('\n')).toEqual(['README.md', 'image.bin', '(stopped at 2 files; narrow it with path or pattern)']);
  });
});

describe('grep', () => {
  it('finds matching lines as file:line: text, skipping binary files and dependencies', async () => {
    expect(await call('grep', { pattern: 'TODO' })).toBe('README.md:2: TODO: write it\nsrc/a.ts:2: // TODO: more');
    expect(await call('grep', { pattern: 'line [0-9]$', path: 'src/deep/b.ts' })).toContain('src/deep/b.ts:9: line 9');
    expect(await call('grep', { pattern: 'nothing here' })).toBe('(no matches for /nothing here/ under .)');
  });

  it('explains an invalid regular expression and a path outside the root', async () => {
    expect(await failure('grep', { pattern: '(' })).toContain('pattern is not a valid regular expression');
    expect(await failure('grep', { pattern: 'x', path: '../' })).toContain('is outside the workspace');
  });
});

describe('createWorkspaceTools', () => {
  it('offers the six workspace tools with their risks and main arguments', async () => {
    const { toolInfo } = await import('./define-tool.ts');
    const infos = Object.entries(tools).map(([name, tool]) => [name, toolInfo(tool)?.risk]);
    expect(infos).toEqual([
      ['read_file', 'read'],
      ['list_files', 'read'],
      ['grep', 'read'],
      ['write_file', 'write'],
      ['edit_file', 'write'],
      ['bash', 'exec'],
    ]);
    expect(toolInfo(tools.read_file)?.argument({ path: 'src/a.ts' })).toBe('src/a.ts');
    expect(toolInfo(tools.grep)?.argument({ pattern: 'TODO' })).toBe('TODO');
    expect(toolInfo(tools.edit_file)?.argument({ path: 'a.ts', old_string: 'a', new_string: 'b' })).toBe('a.ts');
  });

  it('works in the working directory when no root is given', async () => {
    const previous = process.cwd();
    process.chdir(root);
    try {
      const here = createWorkspaceTools();
      const output = await here.bash.execute!({ command: 'pwd' }, { toolCallId: 'c', messages: [], context: undefined });
      expect(output).toBe(`${await realpath(root)}\n[exit code: 0]`);
      expect(await here.read_file.execute!({ path: 'README.md' }, { toolCallId: 'c', messages: [], context: undefined })).toBe('1\t# Title\n2\tTODO: write it');
    } finally {
      process.chdir(previous);
    }
  });
});
