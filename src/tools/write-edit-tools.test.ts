import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolInfo } from './define-tool.ts';
import { createEditFileTool } from './edit-file-tool.ts';
import { createWriteFileTool } from './write-file-tool.ts';

let base: string;
let root: string;
let outside: string;
let writeFileTool: Tool;
let editFileTool: Tool;

function call(tool: Tool, input: unknown): Promise<string> {
  return tool.execute!(input, { toolCallId: 'call_1', messages: [], context: undefined }) as Promise<string>;
}

async function failure(tool: Tool, input: unknown): Promise<string> {
  return call(tool, input).then(
    () => 'expected a tool error',
    (error: Error) => error.message,
  );
}

const read = (path: string) => readFile(join(root, path), 'utf8');

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'cadre-write-'));
  root = join(base, 'workspace');
  outside = join(base, 'outside');
  await mkdir(root, { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'secret.txt'), 'outside');
  await symlink(outside, join(root, 'linked-dir'));
  await symlink(join(outside, 'secret.txt'), join(root, 'linked-file'));
  await symlink(join(outside, 'missing.txt'), join(root, 'dangling'));
  execFileSync('mkfifo', [join(root, 'pipe')]);
  writeFileTool = createWriteFileTool({ root });
  editFileTool = createEditFileTool({ root });
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('write_file', () => {
  it('creates a file with its missing parent folders, and replaces the whole content of an existing one', async () => {
    expect(await call(writeFileTool, { path: 'new/deep/a.txt', content: 'one\ntwo\n' })).toBe('Created new/deep/a.txt (8 bytes, 2 lines).');
    expect(await read('new/deep/a.txt')).toBe('one\ntwo\n');
    expect(await call(writeFileTool, { path: 'new/deep/a.txt', content: 'x' })).toBe('Replaced new/deep/a.txt (1 bytes, 1 line).');
    expect(await read('new/deep/a.txt')).toBe('x');
  });

  it('keeps the mode of a file it replaces', async () => {
    await writeFile(join(root, 'script.sh'), 'echo old\n', { mode: 0o755 });
    await call(writeFileTool, { path: 'script.sh', content: 'echo new\n' });
    expect((await stat(join(root, 'script.sh'))).mode & 0o777).toBe(0o755);
  });

  it('writes nothing outside the workspace: .., absolute paths, a symlinked parent directory, a link to a file or to a missing file', async () => {
    expect(await failure(writeFileTool, { path: '../outside/x.txt', content: 'x' })).toContain('is outside the workspace');
    expect(await failure(writeFileTool, { path: join(outside, 'x.txt'), content: 'x' })).toContain('is outside the workspace');
    expect(await failure(writeFileTool, { path: 'linked-dir/x.txt', content: 'x' })).toContain('is outside the workspace');
    expect(await failure(writeFileTool, { path: 'linked-dir/new/deeper/x.txt', content: 'x' })).toContain('is outside the workspace');
    expect(await failure(writeFileTool, { path: 'linked-file', content: 'x' })).toContain('is outside the workspace');
    expect(await failure(writeFileTool, { path: 'dangling', content: 'x' })).toBe(
      "'dangling' is a symbolic link to a missing file; write to a real path in the workspace.",
    );
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('outside');
    expect(existsSync(join(outside, 'x.txt')) || existsSync(join(outside, 'new')) || existsSync(join(outside, 'missing.txt'))).toBe(false);
  });

  it('refuses the root, directories, FIFOs, a file used as a folder, NUL bytes and bad types with tool errors', async () => {
    expect(await failure(writeFileTool, { path: '.', content: 'x' })).toBe("'.' is the workspace root, a directory; give a file path.");
    expect(await failure(writeFileTool, { path: 'new', content: 'x' })).toBe("'new' is a directory; use list_files to see its files.");
    expect(await failure(writeFileTool, { path: 'pipe', content: 'x' })).toBe(
      "'pipe' is not a regular file (a FIFO, socket or device); only regular files are written.",
    );
    expect(await failure(writeFileTool, { path: 'script.sh/x', content: 'x' })).toContain('is a file, not a directory');
    expect(await failure(writeFileTool, { path: 'a\0b', content: 'x' })).toContain('NUL character');
    expect(await failure(writeFileTool, { path: 'a.txt' })).toBe(
      "Invalid input for tool 'write_file': content: required: the whole new content of the file, as a string. Fix these and call it again.",
    );
  });

  it('is a write tool whose argument is the path', () => {
    expect(toolInfo(writeFileTool)?.risk).toBe('write');
    expect(toolInfo(writeFileTool)?.argument({ path: 'docs/a.md', content: '' })).toBe('docs/a.md');
  });
});

describe('edit_file', () => {
  it('replaces a unique exact match and says where', async () => {
    await writeFile(join(root, 'code.ts'), 'const a = 1;\nconst b = 2;\nconst c = 3;\n');
    expect(await call(editFileTool, { path: 'code.ts', old_string: 'const b = 2;', new_string: 'const b = 20;' })).toBe(
      'Edited code.ts: replaced 1 occurrence at line 2.',
    );
    expect(await read('code.ts')).toBe('const a = 1;\nconst b = 20;\nconst c = 3;\n');
  });

  it('treats $ patterns in new_string literally', async () => {
    await writeFile(join(root, 'dollar.txt'), 'price: X\n');
    await call(editFileTool, { path: 'dollar.txt', old_string: 'X', new_string: "$& $1 $$ $'" });
    expect(await read('dollar.txt')).toBe("price: $& $1 $$ $'\n");
  });

  it('refuses an ambiguous match with its count and lines, and replaces every one with replace_all', async () => {
    await writeFile(join(root, 'many.txt'), 'foo\nbar\nfoo\nfoo bar\n');
    expect(await failure(editFileTool, { path: 'many.txt', old_string: 'foo', new_string: 'baz' })).toBe(
      "old_string occurs 3 times in 'many.txt' (lines 1, 3, 4); include more surrounding lines to make it unique, or set replace_all to replace every one.",
    );
    expect(await read('many.txt')).toBe('foo\nbar\nfoo\nfoo bar\n');
    expect(await call(editFileTool, { path: 'many.txt', old_string: 'foo', new_string: 'baz', replace_all: true })).toBe(
      'Edited many.txt: replaced 3 occurrences (lines 1, 3, 4).',
    );
    expect(await read('many.txt')).toBe('baz\nbar\nbaz\nbaz bar\n');
  });

  it('refuses a missing match saying there were 0, and an old_string equal to new_string, leaving the file alone', async () => {
    await writeFile(join(root, 'same.txt'), 'hello\n');
    expect(await failure(editFileTool, { path: 'same.txt', old_string: 'goodbye', new_string: 'x' })).toBe(
      "old_string was not found in 'same.txt' (0 matches). It must match the file exactly, white space and indentation included; read the file again and copy the text.",
    );
    expect(await failure(editFileTool, { path: 'same.txt', old_string: 'hello', new_string: 'hello' })).toBe(
      'old_string and new_string are the same; there is nothing to change.',
    );
    expect(await failure(editFileTool, { path: 'same.txt', old_string: '', new_string: 'x' })).toContain(
      'old_string: must not be empty (to create a file, use write_file)',
    );
    expect(await read('same.txt')).toBe('hello\n');
  });

  it('matches \\n in old_string against CRLF line endings and keeps them', async () => {
    await writeFile(join(root, 'windows.txt'), 'one\r\ntwo\r\nthree\r\n');
    await call(editFileTool, { path: 'windows.txt', old_string: 'one\ntwo', new_string: 'uno\ndos' });
    expect(await read('windows.txt')).toBe('uno\r\ndos\r\nthree\r\n');
  });

  it('refuses missing, binary, non-UTF-8 and outside files', async () => {
    expect(await failure(editFileTool, { path: 'nope.txt', old_string: 'a', new_string: 'b' })).toContain("No such file or directory: 'nope.txt'");
    await writeFile(join(root, 'image.bin'), Buffer.from([1, 0, 2]));
    expect(await failure(editFileTool, { path: 'image.bin', old_string: 'a', new_string: 'b' })).toBe(
      "'image.bin' is a binary file; edit_file edits text only.",
    );
    await writeFile(join(root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    expect(await failure(editFileTool, { path: 'latin1.txt', old_string: 'caf', new_string: 'b' })).toBe(
      "'latin1.txt' is not valid UTF-8 text; edit_file would damage it.",
    );
    expect(await failure(editFileTool, { path: 'linked-file', old_string: 'outside', new_string: 'changed' })).toContain('is outside the workspace');
    expect(await failure(editFileTool, { path: 'pipe', old_string: 'a', new_string: 'b' })).toContain('is not a regular file');
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('outside');
  });
});

describe('what an ask shows of a write or an edit', () => {
  const preview = (tool: Tool, input: unknown) => toolInfo(tool)!.previewOfParsed(toolInfo(tool)!.parse(input));

  it('shows an edit as the diff of the file, CRLF files included, and changes nothing', async () => {
    await writeFile(join(root, 'user.js'), 'const name = "a";\nexport default name;\n');
    expect(await preview(editFileTool, { path: 'user.js', old_string: '"a"', new_string: '"b"' })).toEqual({
      kind: 'diff',
      path: 'user.js',
      diff: '--- a/user.js\n+++ b/user.js\n@@ -1,2 +1,2 @@\n-const name = "a";\n+const name = "b";\n export default name;',
    });
    expect(await read('user.js')).toBe('const name = "a";\nexport default name;\n');
    await writeFile(join(root, 'crlf.txt'), 'one\r\ntwo\r\n');
    expect(await preview(editFileTool, { path: 'crlf.txt', old_string: 'one\ntwo', new_string: 'uno' })).toMatchObject({
      diff: '--- a/crlf.txt\n+++ b/crlf.txt\n@@ -1,2 +1 @@\n-one\r\n-two\r\n+uno\r',
    });
  });

  it('refuses an edit that cannot apply at its check, before anyone would be asked', async () => {
    await writeFile(join(root, 'check.txt'), 'same\nsame\n');
    const check = (input: unknown) =>
      toolInfo(editFileTool)!
        .check(input)
        .then(
          () => 'passed',
          (error: Error) => error.message,
        );
    expect(await check({ path: 'check.txt', old_string: 'missing', new_string: 'b' })).toContain('(0 matches)');
    expect(await check({ path: 'check.txt', old_string: 'same', new_string: 'b' })).toContain('occurs 2 times');
    expect(await check({ path: 'check.txt', old_string: 'same', new_string: 'b', replace_all: true })).toBe('passed');
  });

  it('shows a write as a diff against the file as it is, from nothing for a new file, and says when the file there is not text', async () => {
    await writeFile(join(root, 'page.md'), '# Page\nOld text.\n');
    expect(await preview(writeFileTool, { path: 'page.md', content: '# Page\nNew text.\n' })).toEqual({
      kind: 'diff',
      path: 'page.md',
      diff: '--- a/page.md\n+++ b/page.md\n@@ -1,2 +1,2 @@\n # Page\n-Old text.\n+New text.',
    });
    expect(await preview(writeFileTool, { path: 'fresh/dir/page.md', content: 'Hi.\n' })).toEqual({
      kind: 'diff',
      path: 'fresh/dir/page.md',
      diff: '--- /dev/null\n+++ b/fresh/dir/page.md\n@@ -0,0 +1 @@\n+Hi.',
    });
    await writeFile(join(root, 'blob.bin'), Buffer.from([1, 0, 2]));
    expect(await preview(writeFileTool, { path: 'blob.bin', content: 'text\n' })).toEqual({
      kind: 'diff',
      path: 'blob.bin',
      diff: '--- a/blob.bin (not shown: it is not text)\n+++ b/blob.bin\n@@ -0,0 +1 @@\n+text',
    });
    expect(existsSync(join(root, 'fresh'))).toBe(false);
  });
});
