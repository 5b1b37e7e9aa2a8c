import { z } from 'zod';
import { defineTool, ToolInputError } from './define-tool.ts';
import { toolDescription } from './tool-description.ts';
import { resolveWritablePath } from './workspace-path.ts';
import { createStoreFileGuard } from './store-file-guard.ts';
import { writeRegularFile } from './write-regular-file.ts';
import { writePreview } from './approval-previews.ts';

const inputSchema = z.object({
  path: z.string({ error: 'required: a file path relative to the workspace root' }).min(1, 'must not be empty'),
  content: z.string({ error: 'required: the whole new content of the file, as a string' }),
});

/**
 * `write_file {path, content}`: creates a file of the workspace (with its missing parent folders)
 * or replaces its whole content. The write is confined to the workspace like the read tools: no
 * path, `..` or symbolic link (of the file or of a parent folder) carries it outside, nor onto the
 * store's files (`storeFiles`). An ask shows the write as a unified diff against the file as it
 * is, or from nothing for a new file.
 */
export function createWriteFileTool({
  root,
  maxBytes = 10 * 1024 * 1024,
  storeFiles = [],
}: {
  root: string;
  maxBytes?: number;
  storeFiles?: readonly string[] | undefined;
}) {
  return defineTool({
    name: 'write_file',
    description: toolDescription('write-file.txt', { maxBytes }),
    inputSchema,
    risk: 'write',
    argument: (input) => input.path,
    check: async ({ path }) => void (await resolveWritablePath(root, path, createStoreFileGuard(storeFiles))),
    preview: async ({ path, content }) => {
      const guard = createStoreFileGuard(storeFiles);
      return writePreview(await resolveWritablePath(root, path, guard), content, maxBytes, guard);
    },
    execute: async ({ path, content }) => {
      const bytes = Buffer.byteLength(content, 'utf8');
      if (bytes > maxBytes) throw new ToolInputError(`content is ${bytes} bytes, more than write_file writes (${maxBytes}).`);
      const guard = createStoreFileGuard(storeFiles);
      const target = await resolveWritablePath(root, path, guard);
      const { created } = await writeRegularFile(target, content, guard);
      const lines = content === '' ? 0 : content.split('\n').length - (content.endsWith('\n') ? 1 : 0);
      return `${created ? 'Created' : 'Replaced'} ${target.relative} (${bytes} bytes, ${lines} line${lines === 1 ? '' : 's'}).`;
    },
  });
}
