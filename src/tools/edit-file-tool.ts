import { z } from 'zod';
import { defineTool, ToolInputError } from './define-tool.ts';
import { looksBinary, readRegularFile } from './read-regular-file.ts';
import { toolDescription } from './tool-description.ts';
import { resolveWritablePath } from './workspace-path.ts';
import { createStoreFileGuard } from './store-file-guard.ts';
import { writeRegularFile } from './write-regular-file.ts';
import { diffPreview } from './approval-previews.ts';

const inputSchema = z.object({
  path: z.string({ error: 'required: a file path relative to the workspace root' }).min(1, 'must not be empty'),
  old_string: z.string({ error: 'required: the exact text to replace' }).min(1, 'must not be empty (to create a file, use write_file)'),
  new_string: z.string({ error: 'required: the text to put in its place (empty to delete)' }),
  replace_all: z.boolean('must be true or false').optional(),
});

/** Where `needle` occurs in `text`, without overlaps, as start indexes. */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length)) found.push(index);
  return found;
}

/** The 1-based line of each index (indexes in increasing order). */
function linesOf(text: string, indexes: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let scanned = 0;
  for (const index of indexes) {
    for (let at = text.indexOf('\n', scanned); at !== -1 && at < index; at = text.indexOf('\n', at + 1)) {
      line++;
      scanned = at + 1;
    }
    lines.push(line);
  }
  return lines;
}

function listLines(lines: readonly number[]): string {
  const shown = lines.slice(0, 10).join(', ');
  return lines.length > 10 ? `${shown}, …` : shown;
}

type EditInput = z.infer<typeof inputSchema>;

/** What an edit makes of a file's text: the new text, and where its matches were. */
interface AppliedEdit {
  edited: string;
  found: number[];
  lines: number[];
}

/**
 * Applies an edit to a file's text in memory. Throws a {@link ToolInputError} for an edit that
 * cannot apply: nothing to change, no match, or several without `replace_all`.
 */
function applyEdit(text: string, relative: string, input: EditInput): AppliedEdit {
  const { old_string: oldString, new_string: newString, replace_all: replaceAll = false } = input;
  if (oldString === newString) throw new ToolInputError('old_string and new_string are the same; there is nothing to change.');
  let [search, replacement] = [oldString, newString];
  let found = occurrences(text, search);
  if (found.length === 0 && text.includes('\r\n') && oldString.includes('\n') && !oldString.includes('\r')) {
    [search, replacement] = [oldString.replaceAll('\n', '\r\n'), newString.replaceAll('\r\n', '\n').replaceAll('\n', '\r\n')];
    found = occurrences(text, search);
  }
  if (found.length === 0) {
    throw new ToolInputError(
      `old_string was not found in '${relative}' (0 matches). It must match the file exactly, white space and indentation included; read the file again and copy the text.`,
    );
  }
  const lines = linesOf(text, found);
  if (found.length > 1 && !replaceAll) {
    throw new ToolInputError(
      `old_string occurs ${found.length} times in '${relative}' (lines ${listLines(lines)}); include more surrounding lines to make it unique, or set replace_all to replace every one.`,
    );
  }
  let edited = '';
  let last = 0;
  for (const index of found) {
    edited += text.slice(last, index) + replacement;
    last = index + search.length;
  }
  edited += text.slice(last);
  return { edited, found, lines };
}

/**
 * `edit_file {path, old_string, new_string, replace_all?}`: replaces an exact piece of a text
 * file. The match must be unique unless `replace_all`; a missing or ambiguous match is a tool
 * error saying how many matches there are and on which lines, given before anyone is asked to
 * approve the edit. In a file with CRLF line endings, an `old_string` written with `\n` matches
 * its CRLF form. Confined to the workspace, and off the store's files (`storeFiles`). An ask
 * shows the edit as a unified diff of the file.
 */
export function createEditFileTool({
  root,
  maxFileBytes = 10 * 1024 * 1024,
  storeFiles = [],
}: {
  root: string;
  maxFileBytes?: number;
  storeFiles?: readonly string[] | undefined;
}) {
  /** The file's text as it is now, and the edit applied to it. */
  async function edit(input: EditInput) {
    const guard = createStoreFileGuard(storeFiles);
    const target = await resolveWritablePath(root, input.path, guard);
    const buffer = await readRegularFile(target.real, target.relative, maxFileBytes, guard);
    if (looksBinary(buffer)) throw new ToolInputError(`'${target.relative}' is a binary file; edit_file edits text only.`);
    const text = buffer.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(buffer)) throw new ToolInputError(`'${target.relative}' is not valid UTF-8 text; edit_file would damage it.`);
    return { guard, target, text, ...applyEdit(text, target.relative, input) };
  }

  return defineTool({
    name: 'edit_file',
    description: toolDescription('edit-file.txt'),
    inputSchema,
    risk: 'write',
    argument: (input) => input.path,
    check: async (input) => void (await edit(input)),
    preview: async (input) => {
      const { target, text, edited } = await edit(input);
      return diffPreview(target.relative, text, edited);
    },
    execute: async (input) => {
      const { guard, target, edited, found, lines } = await edit(input);
      await writeRegularFile(target, edited, guard);
      const what = found.length === 1 ? `1 occurrence at line ${lines[0]}` : `${found.length} occurrences (lines ${listLines(lines)})`;
      return `Edited ${target.relative}: replaced ${what}.`;
    },
  });
}
