import { readdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { userConfigDirectory } from '../config/config-locations.ts';
import type { AgentDefinition } from './agent-definition.ts';
import { AgentRegistry } from './agent-registry.ts';
import { builtInAgents } from './built-in-agents.ts';
import { applyWorkspaceAgentServers } from './workspace-agent-servers.ts';
import { agentLoadError, parseAgentFile, type AgentLoadError } from './parse-agent-file.ts';

/** Where {@link loadAgents} looks for agents. */
export interface LoadAgentsOptions {
  /**
   * The working directory: `<cwd>/.claude/agents/`, `<cwd>/.opencode/agent/` (or `agents/`) and
   * `<cwd>/.cadre/agents/` are read, and relative `dirs` resolve against it.
   */
  cwd: string;
  /** The home directory: `<home>/.claude/agents/` and `<home>/.config/cadre/agents/` are read. @default os.homedir() */
  home?: string;
  /** The environment, for `XDG_CONFIG_HOME` (then `$XDG_CONFIG_HOME/cadre/agents/` is read). @default process.env */
  env?: Record<string, string | undefined>;
  /** The `--agents DIR` directories, in order; each must exist. @default [] */
  dirs?: string[];
  /** Agents registered in code; they win over every file. @default [] */
  agents?: AgentDefinition[];
  /**
   * Those of `dirs` the workspace's own configuration named (its `agents` key): like the
   * project's own folders, the MCP servers their files define need a person's trust. @default []
   */
  workspaceDirs?: string[];
  /** Trust the workspace's agent files' MCP servers for this call (`--trust`, `CADRE_TRUST=1`). @default false */
  trust?: boolean;
}

interface Place {
  directory: string;
  required: boolean;
  /** The workspace's: MCP servers its files define start only once a person trusted them. */
  workspace?: boolean;
  /** opencode's folders: the file name is the id. */
  opencode?: boolean;
}

function errorCode(error: unknown) {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

function reason(error: unknown) {
  const code = errorCode(error);
  if (code === 'ENOENT') return 'not found';
  if (code === 'ENOTDIR') return 'not a directory';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return error instanceof Error ? error.message : String(error);
}

interface Loaded {
  agents: AgentDefinition[];
  errors: AgentLoadError[];
}

/** A folder's agent files, its subfolders' included (collections group agents by topic), sorted by path. */
async function agentFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.name.endsWith('.md') && !/^readme\.md$/i.test(entry.name) && (entry.isFile() || entry.isSymbolicLink()))
    .map((entry) => relative(directory, join(entry.parentPath, entry.name)))
    .sort();
}

async function loadDirectory(place: Place): Promise<Loaded> {
  const errors: AgentLoadError[] = [];
  let names: string[];
  try {
    names = await agentFiles(place.directory);
  } catch (error) {
    if (!place.required && errorCode(error) === 'ENOENT') return { agents: [], errors };
    errors.push(agentLoadError(place.directory, null, `agents directory ${reason(error)}`));
    return { agents: [], errors };
  }

  const texts = await Promise.all(names.map((name) => readFile(join(place.directory, name), 'utf8').catch((error: unknown) => ({ error }))));
  const loaded = new Map<string, AgentDefinition>();
  names.forEach((name, index) => {
    const path = join(place.directory, name);
    const text = texts[index];
    if (typeof text !== 'string') {
      errors.push(agentLoadError(path, null, `cannot read the file: ${reason(text.error)}`));
      return;
    }
    const result = parseAgentFile(path, text, { opencode: place.opencode === true });
    if (!result.ok) {
      errors.push(result.error);
      return;
    }
    const earlier = loaded.get(result.agent.name);
    if (earlier !== undefined) {
      errors.push(
        agentLoadError(path, 'name', `'${result.agent.name}' is also the id of ${earlier.source}: two files of one folder cannot share an id; rename one`),
      );
      return;
    }
    loaded.set(result.agent.name, result.agent);
  });
  return { agents: [...loaded.values()], errors };
}

/**
 * Loads agent definitions; on equal names the later place wins: built-ins, Claude Code's
 * `<home>/.claude/agents/`, `$XDG_CONFIG_HOME/cadre/agents/` (default `<home>/.config/cadre/agents/`),
 * `<cwd>/.claude/agents/`, opencode's `<cwd>/.opencode/agent/` (and `agents/`), `<cwd>/.cadre/agents/`,
 * each of `dirs` in order, then `agents`. Only `*.md` files are read (subfolders too, README.md
 * excepted), sorted by path. Never throws
 * for a broken file or a missing `--agents` directory: those become entries of `registry.errors`
 * and the rest still loads.
 */
export async function loadAgents(options: LoadAgentsOptions): Promise<AgentRegistry> {
  const places = agentPlaces(options);
  const loaded = await Promise.all(places.map(loadDirectory));
  const { agents: fromWorkspace, grant } = await applyWorkspaceAgentServers(
    loaded.flatMap((place, index) => (places[index].workspace ? place.agents : [])),
    {
      cwd: resolve(options.cwd),
      userConfigDirectory: userConfigDirectory(options.env ?? process.env, options.home ?? homedir()),
      once: options.trust === true,
    },
  );
  // Back in the order of the places, so that a later place still wins on equal names.
  const applied = new Map(fromWorkspace.map((agent) => [agent.source, agent]));
  const fromFiles = loaded.flatMap((place, index) =>
    places[index].workspace ? place.agents.map((agent) => applied.get(agent.source) ?? agent) : place.agents,
  );
  const errors = loaded.flatMap((place) => place.errors);
  return new AgentRegistry([...builtInAgents, ...fromFiles, ...(options.agents ?? [])], errors, grant);
}

/**
 * A version of the agent files {@link loadAgents} would read: their paths, sizes and modification
 * times, and the folders that are missing. It changes when a file is added, removed, renamed or
 * written, so a long-lived process (a worker) knows when to load its agents again; it costs a
 * listing of each folder and a `stat` of each file, not a read.
 */
export async function agentFilesVersion(options: LoadAgentsOptions): Promise<string> {
  const parts = await Promise.all(
    agentPlaces(options).map(async ({ directory }) => {
      let names: string[];
      try {
        names = await agentFiles(directory);
      } catch (error) {
        return `${directory} ${errorCode(error) ?? 'unreadable'}`;
      }
      const files = await Promise.all(
        names.map(async (name) => {
          const found = await stat(join(directory, name)).catch(() => null);
          return found ? `${name}:${found.size}:${found.mtimeMs}:${found.ino}` : `${name}:gone`;
        }),
      );
      return `${directory} ${files.join(' ')}`;
    }),
  );
  return parts.join('\n');
}

/** The folders agents are read from, in the order of {@link loadAgents}, each once. */
function agentPlaces(options: LoadAgentsOptions): Place[] {
  const { cwd, home = homedir(), env = process.env, dirs = [] } = options;
  const project = resolve(cwd);
  const person = [join(home, '.claude', 'agents'), join(userConfigDirectory(env, home), 'agents')];
  const workspaceDirs = new Set((options.workspaceDirs ?? []).map((directory) => resolve(cwd, directory)));
  const optional = (directory: string): Place => ({ directory, required: false });
  // The person's own folders stay theirs even when the workspace is the home directory.
  const workspace = (place: Place): Place => ({ ...place, workspace: !person.includes(place.directory) });
  const places: Place[] = [
    ...person.map(optional),
    workspace(optional(join(project, '.claude', 'agents'))),
    workspace({ ...optional(join(project, '.opencode', 'agent')), opencode: true }),
    workspace({ ...optional(join(project, '.opencode', 'agents')), opencode: true }),
    workspace(optional(join(project, '.cadre', 'agents'))),
    ...dirs.map((directory) => {
      const place = { directory: resolve(cwd, directory), required: true };
      return workspaceDirs.has(place.directory) ? workspace(place) : place;
    }),
  ];
  // A directory named twice is read once, at its last position, so its errors are not reported twice.
  return places.filter((place, index) => !places.slice(index + 1).some((later) => later.directory === place.directory));
}
