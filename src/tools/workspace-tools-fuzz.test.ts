import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tool } from 'ai';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTool } from './bash-tool.ts';
import { createEditFileTool } from './edit-file-tool.ts';
import { createGrepTool } from './grep-tool.ts';
import { createListFilesTool } from './list-files-tool.ts';
import { createReadFileTool } from './read-file-tool.ts';
import { ToolInputError } from './tool-input-error.ts';
import { createWriteFileTool } from './write-file-tool.ts';

let base: string;
let root: string;
let outside: string;
let outsideBefore: string;

/** Every file under `directory` with its content, to prove nothing outside the workspace changed. */
async function snapshot(directory: string): Promise<string> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  const lines = await Promise.all(
    entries.map(async (entry) => {
      const path = join(entry.parentPath, entry.name);
      return entry.isFile() ? `${path}=${await readFile(path, 'utf8')}` : path;
    }),
  );
  return lines.sort().join('\n');
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'cadre-fuzz-'));
  root = join(base, 'workspace');
  outside = join(base, 'outside');
  await mkdir(join(root, 'src'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'secret.txt'), 'outside');
  await writeFile(join(root, 'src', 'a.ts'), 'const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
  await writeFile(join(root, 'notes.md'), '# notes\nfoo bar foo\n');
  await writeFile(join(root, '.gitignore'), 'ignored/\n');
  await symlink(outside, join(root, 'linked-dir'));
  await symlink(join(outside, 'secret.txt'), join(root, 'linked-file'));
  await symlink(join(outside, 'missing.txt'), join(root, 'dangling'));
  execFileSync('mkfifo', [join(root, 'pipe')]);
  outsideBefore = await snapshot(outside);
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const hostilePaths = () => [
  '..',
  '../outside/new.txt',
  '../../x',
  join(outside, 'new.txt'),
  join(outside, 'secret.txt'),
  '/etc/passwd',
  '/',
  '~/x',
  'linked-dir/new.txt',
  'linked-dir/deep/new.txt',
  'linked-file',
  'dangling',
  'linked-dir/../../outside/new.txt',
  'src/../../outside/new.txt',
  'pipe',
  '.',
  '',
  ' ',
  'src',
  'src/a.ts',
  'notes.md',
  'a\0b',
  'src/a.ts\0',
  'x/'.repeat(3000),
  'é/ü.txt',
  '\\..\\x',
  'new/file.txt',
];

const pathArbitrary = () =>
  fc.oneof(
    fc.constantFrom(...hostilePaths()),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc
      .array(fc.constantFrom('..', '.', 'src', 'linked-dir', 'new', 'pipe', 'dangling', '', '\0', 'a.ts'), { maxLength: 6 })
      .map((segments) => segments.join('/')),
  );

const numberArbitrary = () =>
  fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1, 2.5, 1e308, -1e308, Infinity, -Infinity, Number.NaN, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2));

/** A field: usually of the right shape, sometimes anything at all. */
function field<T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 4, arbitrary }, { weight: 1, arbitrary: fc.anything() });
}

/** The input as a whole: a record of fields, or anything at all (null, arrays, strings, numbers). */
function inputOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 6, arbitrary: fc.record(fields, { requiredKeys: [] }) }, { weight: 1, arbitrary: fc.anything() });
}

/** Calls the tool and checks it answered with a string or a {@link ToolInputError}, nothing else. */
async function answersCleanly(tool: Tool, input: unknown): Promise<void> {
  const outcome = await Promise.resolve()
    .then(() => tool.execute!(input, { toolCallId: 'fuzz', messages: [], context: undefined }))
    .then(
      (value: unknown) => ({ value }),
      (error: unknown) => ({ error }),
    );
  const shown = () => String(JSON.stringify(input)).slice(0, 200);
  if ('error' in outcome) {
    if (!ToolInputError.isInstance(outcome.error)) throw new Error(`not a ToolInputError for ${shown()}: ${String(outcome.error).slice(0, 300)}`);
  } else if (typeof outcome.value !== 'string') {
    throw new Error(`not a string for ${shown()}: ${String(outcome.value).slice(0, 300)}`);
  }
}

async function fuzz(tool: Tool, input: fc.Arbitrary<unknown>, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(input, (value) => answersCleanly(tool, value)),
    { numRuns },
  );
  expect(await snapshot(outside)).toBe(outsideBefore);
  for (const path of hostilePaths()) if (path.startsWith('/') && path.includes('new')) expect(existsSync(path)).toBe(false);
}

describe('fuzzing every workspace tool: a string or a ToolInputError, and nothing written outside the workspace', () => {
  it('read_file', async () => {
    await fuzz(createReadFileTool({ root }), inputOf({ path: field(pathArbitrary()), offset: field(numberArbitrary()), limit: field(numberArbitrary()) }), 400);
  }, 60_000);

  it('list_files', async () => {
    const glob = fc.oneof(
      fc.constantFrom('*.ts', '[ab].ts', '*.@(ts|md)', '{', '[', '!(', '**/**', '\0', '+(a|b)'),
      fc.string({ unit: 'binary', maxLength: 12 }),
    );
    await fuzz(createListFilesTool({ root, timeoutMs: 3000 }), inputOf({ path: field(pathArbitrary()), pattern: field(glob) }), 150);
  }, 60_000);

  it('grep', async () => {
    const pattern = fc.oneof(
      fc.constantFrom('(a+)+$', '(?<=a)b', '\\1', '[', 'foo', '(?i)FOO', '\0', 'a{1000}{1000}', '\\p{Greek}'),
      fc.string({ unit: 'binary', maxLength: 20 }),
    );
    const glob = fc.oneof(fc.constantFrom('*.ts', '[', '*.@(md|ts)'), fc.string({ maxLength: 8 }));
    await fuzz(
      createGrepTool({ root, limits: { timeoutMs: 3000 } }),
      inputOf({ pattern: field(pattern), path: field(pathArbitrary()), glob: field(glob), ignore_case: field(fc.boolean()) }),
      200,
    );
  }, 60_000);

  it('write_file', async () => {
    await fuzz(
      createWriteFileTool({ root, maxBytes: 10_000 }),
      inputOf({ path: field(pathArbitrary()), content: field(fc.string({ unit: 'binary', maxLength: 200 })) }),
      400,
    );
  }, 60_000);

  it('edit_file', async () => {
    const text = fc.oneof(fc.constantFrom('foo', 'const a', '1;\n', 'outside', ''), fc.string({ unit: 'binary', maxLength: 10 }));
    await fuzz(
      createEditFileTool({ root }),
      inputOf({
        path: field(fc.oneof(fc.constantFrom('src/a.ts', 'notes.md', 'linked-file'), pathArbitrary())),
        old_string: field(text),
        new_string: field(text),
        replace_all: field(fc.boolean()),
      }),
      400,
    );
  }, 60_000);

  it('bash (commands that only print the fuzzed text)', async () => {
    const quoted = fc.string({ unit: 'binary', maxLength: 30 }).map((text) => `printf '%s' '${text.replaceAll("'", "'\\''")}'`);
    const timeout = fc.oneof(numberArbitrary(), fc.constantFrom(5, 30));
    await fuzz(createBashTool({ root, killGraceMs: 50 }), inputOf({ command: field(quoted), timeout_seconds: field(timeout) }), 60);
  }, 60_000);
});
