import { resolve } from 'node:path';
import type { ToolSet } from 'ai';
import { createBashTool } from './bash-tool.ts';
import { createEditFileTool } from './edit-file-tool.ts';
import { createGrepTool } from './grep-tool.ts';
import { createListFilesTool } from './list-files-tool.ts';
import { createReadFileTool } from './read-file-tool.ts';
import { createWriteFileTool } from './write-file-tool.ts';
import { createSandbox, type Sandbox, type SandboxOptions } from './sandbox/create-sandbox.ts';

/** Options of {@link createWorkspaceTools}. */
export interface WorkspaceToolsOptions {
  /**
   * The directory the tools work in; a path outside it is a tool error, and `bash` starts there.
   * @default process.cwd()
   */
  root?: string;
  /**
   * The OS sandbox `bash` runs in: one made with `createSandbox`, or its options (`mode`,
   * `network`, `writable`, `db`, `readOnly`) for one rooted at `root`.
   * @default { mode: 'auto', network: false }: confined where the OS has a sandbox, network off
   */
  sandbox?: Sandbox | Omit<SandboxOptions, 'root'>;
}

function isSandbox(value: Sandbox | Omit<SandboxOptions, 'root'>): value is Sandbox {
  return typeof (value as Sandbox).launch === 'function';
}

/**
 * The workspace tools agents may name in their `tools` allow-list (CONTRACT section 10), all
 * confined to `root`: `read_file`, `list_files`, `grep` (risk `read`), `write_file`, `edit_file`
 * (`write`) and `bash` (`exec`). Permission rules and approvals decide which calls run; `bash`
 * runs in the OS sandbox where there is one (`sandbox`).
 * @example createCadre({ store, model, tools: createWorkspaceTools() })
 */
export function createWorkspaceTools({ root = process.cwd(), sandbox = {} }: WorkspaceToolsOptions = {}): ToolSet {
  const absolute = resolve(root);
  const box = isSandbox(sandbox) ? sandbox : createSandbox({ ...sandbox, root: absolute });
  return {
    read_file: createReadFileTool({ root: absolute }),
    list_files: createListFilesTool({ root: absolute }),
    grep: createGrepTool({ root: absolute }),
    write_file: createWriteFileTool({ root: absolute }),
    edit_file: createEditFileTool({ root: absolute }),
    bash: createBashTool({ root: absolute, sandbox: box }),
  };
}
