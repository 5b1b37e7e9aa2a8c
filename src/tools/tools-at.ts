import type { Tool, ToolSet } from 'ai';

/** Where a run's tools work when it is not the workspace: its own git worktree. */
export interface ToolPlace {
  /** The folder the tools are confined to, and where `bash` starts. */
  root: string;
  /** Further folders `bash` may write (the worktree's git folders). @default none */
  writable?: readonly string[];
  /** Folders `bash` must see read-only (the repository's git folder). @default none */
  readable?: readonly string[];
}

/** How each workspace tool is made again for another place; filled by `createWorkspaceTools`. */
const makers = new WeakMap<object, (place: ToolPlace) => Tool>();

/** Records how `tool` is made for another place (see {@link toolsAt}). */
export function rememberToolMaker(tool: Tool, make: (place: ToolPlace) => Tool): void {
  makers.set(tool, make);
}

/**
 * The same tools confined to another place: each workspace tool (made by `createWorkspaceTools`)
 * is made again rooted there, with its sandbox moved along; other tools (MCP servers', an app's
 * own) are kept as they are.
 */
export function toolsAt(tools: ToolSet, place: ToolPlace): ToolSet {
  return Object.fromEntries(Object.entries(tools).map(([name, tool]) => [name, makers.get(tool)?.(place) ?? tool]));
}
