import { resolve } from 'node:path';
import type { ToolSet } from 'ai';
import { createBashTool } from './bash-tool.ts';
import { createEditFileTool } from './edit-file-tool.ts';
import { createGrepTool } from './grep-tool.ts';
import { createListFilesTool } from './list-files-tool.ts';
import { createReadFileTool } from './read-file-tool.ts';
import { createWriteFileTool } from './write-file-tool.ts';
import { createSandbox, type Sandbox, type SandboxOptions } from './sandbox/create-sandbox.ts';
import { rememberToolMaker, type ToolPlace } from './tools-at.ts';

/** Options of {@link createWorkspaceTools}. */
export interface WorkspaceToolsOptions {
  /**
   * The directory the tools work in; a path outside it is a tool error, and `bash` starts there.
   * @default process.cwd()
   */
  root?: string;
  /**
   * The store's files (`store.files`), which no tool opens, lists or searches. Pass them whenever
   * the store is a file in or near the workspace: a tool that opened the database in the process
   * holding it would drop SQLite's locks (closing any descriptor of a file drops the process's
   * POSIX locks on it), and other processes would then lose sight of its runs.
   * @default none
   * @example createWorkspaceTools({ storeFiles: store.files })
   */
  storeFiles?: readonly string[] | undefined;
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
 * The workspace tools agents may name in their `tools` allow-list (docs/tools-and-approvals.md), all
 * confined to `root`: `read_file`, `list_files`, `grep` (risk `read`), `write_file`, `edit_file`
 * (`write`) and `bash` (`exec`). Permission rules and approvals decide which calls run. None of
 * them opens the store's files (`storeFiles`); `bash` runs in the OS sandbox where there is one
 * (`sandbox`).
 * @example createCadre({ store, model, tools: createWorkspaceTools({ storeFiles: store.files }) })
 */
export function createWorkspaceTools({ root = process.cwd(), storeFiles = [], sandbox = {} }: WorkspaceToolsOptions = {}): ToolSet {
  const absolute = resolve(root);
  // The store's files stay read-only inside the box too, wherever `db` points.
  const box = isSandbox(sandbox) ? sandbox : createSandbox({ ...sandbox, root: absolute, readOnly: [...(sandbox.readOnly ?? []), ...storeFiles] });
  const tools = rootedTools(absolute, storeFiles, box);
  // A run in its own worktree gets the same tools rooted there (toolsAt), its box moved along;
  // the set is made once per place.
  let made: { place: ToolPlace; tools: ToolSet } | undefined;
  const madeAt = (place: ToolPlace): ToolSet => {
    if (made?.place !== place) {
      const moved =
        box.at?.(place.root, place) ??
        createSandbox({ mode: box.mode, root: place.root, writable: place.writable, readable: place.readable, readOnly: storeFiles });
      made = { place, tools: rootedTools(resolve(place.root), storeFiles, moved) };
    }
    return made.tools;
  };
  for (const [name, tool] of Object.entries(tools)) rememberToolMaker(tool, (place) => madeAt(place)[name]);
  return tools;
}

function rootedTools(absolute: string, storeFiles: readonly string[], box: Sandbox): ToolSet {
  return {
    read_file: createReadFileTool({ root: absolute, storeFiles }),
    list_files: createListFilesTool({ root: absolute, storeFiles }),
    grep: createGrepTool({ root: absolute, storeFiles }),
    write_file: createWriteFileTool({ root: absolute, storeFiles }),
    edit_file: createEditFileTool({ root: absolute, storeFiles }),
    bash: createBashTool({ root: absolute, sandbox: box }),
  };
}
