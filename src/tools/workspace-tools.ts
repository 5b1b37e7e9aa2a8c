import { resolve } from 'node:path';
import type { ToolSet } from 'ai';
import { createGrepTool } from './grep-tool.ts';
import { createListFilesTool } from './list-files-tool.ts';
import { createReadFileTool } from './read-file-tool.ts';

/** Options of {@link createWorkspaceTools}. */
export interface WorkspaceToolsOptions {
  /** The directory the tools may read; a path outside it is a tool error. Usually the working directory. */
  root: string;
}

/**
 * The read-only workspace tools agents may name in their `tools` allow-list:
 * `read_file`, `list_files` and `grep`, all confined to `root`.
 * @example createCadre({ store, model, tools: createWorkspaceTools({ root: process.cwd() }) })
 */
export function createWorkspaceTools({ root }: WorkspaceToolsOptions): ToolSet {
  const absolute = resolve(root);
  return {
    read_file: createReadFileTool({ root: absolute }),
    list_files: createListFilesTool({ root: absolute }),
    grep: createGrepTool({ root: absolute }),
  };
}
