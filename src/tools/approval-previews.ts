import { lstat } from 'node:fs/promises';
import type { ApprovalPreview } from '../store/records.ts';
import { looksBinary, readRegularFile } from './read-regular-file.ts';
import type { StoreFileGuard } from './store-file-guard.ts';
import { unifiedDiff } from './unified-diff.ts';
import type { WritableWorkspacePath } from './workspace-path.ts';

/** Lines of a preview kept (a diff's two header lines not counted); the rest becomes `... N more lines`. */
export const previewMaxLines = 100;

/**
 * `bash`'s preview: the full command, every line of it up to {@link previewMaxLines}.
 * @example commandPreview('npm test') // { kind: 'command', command: 'npm test' }
 */
export function commandPreview(command: string): ApprovalPreview {
  const lines = command.split('\n');
  if (lines.length <= previewMaxLines) return { kind: 'command', command };
  return { kind: 'command', command: [...lines.slice(0, previewMaxLines), `... ${lines.length - previewMaxLines} more lines`].join('\n') };
}

/** The preview of a change of a file's text: a unified diff, from nothing when `before` is null (a new file). */
export function diffPreview(path: string, before: string | null, after: string): ApprovalPreview {
  return { kind: 'diff', path, diff: unifiedDiff(path, before, after, { maxLines: previewMaxLines }) };
}

/**
 * The preview of writing `content` over the file at `target`: a diff against its text as it is,
 * from nothing when it does not exist yet. A file that cannot be shown as text (binary, too large)
 * is said to be replaced, with the new text as a diff from nothing.
 */
export async function writePreview(target: WritableWorkspacePath, content: string, maxBytes: number, guard: StoreFileGuard): Promise<ApprovalPreview> {
  const exists = await lstat(target.real).then(
    () => true,
    (error: NodeJS.ErrnoException) => error.code !== 'ENOENT',
  );
  if (!exists) return diffPreview(target.relative, null, content);
  let current: Buffer;
  try {
    current = await readRegularFile(target.real, target.relative, maxBytes, guard);
  } catch (error) {
    return replacedPreview(target.relative, content, error instanceof Error ? error.message : String(error));
  }
  const text = current.toString('utf8');
  if (looksBinary(current) || !Buffer.from(text, 'utf8').equals(current)) return replacedPreview(target.relative, content, 'it is not text');
  return diffPreview(target.relative, text, content);
}

/** A diff from nothing, its header saying the file there now is replaced whole and why it is not shown. */
function replacedPreview(path: string, content: string, why: string): ApprovalPreview {
  const diff = unifiedDiff(path, null, content, { maxLines: previewMaxLines }).replace('--- /dev/null', `--- a/${path} (not shown: ${why})`);
  return { kind: 'diff', path, diff };
}
