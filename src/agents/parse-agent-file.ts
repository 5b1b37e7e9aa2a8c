import { basename } from 'node:path';
import {
  agentFrontMatterSchema,
  agentNamePattern,
  describeValidationErrors,
  type AgentDefinition,
} from './agent-definition.ts';
import { mapAgentToolNames, readToolNames } from './agent-tool-names.ts';
import { readFrontMatter } from './read-front-matter.ts';

/** Why one agent file (or directory) did not load. */
export interface AgentLoadError {
  /** The file or directory that failed. */
  path: string;
  /** The first offending front-matter key, like `description`; null when the file as a whole is wrong. */
  field: string | null;
  /** Every problem of the file, one per offending key. */
  problems: { field: string | null; message: string }[];
  /**
   * One line that starts with the path and names every problem, e.g.
   * `/x/.cadre/agents/bad.md: description: required (...); max_turns: must be a whole number of at least 1`.
   */
  message: string;
}

/** The outcome of {@link parseAgentFile}: the agent, or why it did not load. */
export type ParseAgentFileResult = { ok: true; agent: AgentDefinition } | { ok: false; error: AgentLoadError };

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
const problemText = ({ field, message }: { field: string | null; message: string }) => `${field === null ? '' : `${field}: `}${oneLine(message)}`;

/** Builds an {@link AgentLoadError} whose message is one line naming the path and the field. */
export function agentLoadError(path: string, field: string | null, detail: string): AgentLoadError {
  return agentLoadErrors(path, [{ field, message: detail }]);
}

/** Builds an {@link AgentLoadError} for several problems of one file, all named on one line. */
export function agentLoadErrors(path: string, problems: { field: string | null; message: string }[]): AgentLoadError {
  const cleaned = problems.map((problem) => ({ field: problem.field, message: oneLine(problem.message) }));
  return { path, field: cleaned[0]?.field ?? null, problems: cleaned, message: `${path}: ${cleaned.map(problemText).join('; ')}` };
}

const knownKeys = Object.keys(agentFrontMatterSchema.shape);

/** What an unknown key is told: a likely misspelling of a known one, else that it is kept unused. */
function unknownKeyWarning(key: string): string {
  const normalized = key.toLowerCase().replace(/[-_]/g, '');
  const suggestion = knownKeys.find((known) => known.replace(/_/g, '') === normalized);
  return `${key}: not a cadre key; kept, not used${suggestion ? ` (did you mean ${suggestion}?)` : ''}`;
}

/**
 * The allow-list a file's `tools` stands for. opencode's map turns tools on (`true`) and off
 * (`false`); a map that only turns tools off starts from the read tools.
 */
function toolList(tools: string[] | Record<string, boolean>): string[] {
  if (Array.isArray(tools)) return tools;
  const on = Object.keys(tools).filter((name) => tools[name]);
  if (on.length > 0) return on;
  const off = new Set(mapAgentToolNames(Object.keys(tools)).tools);
  return readToolNames.filter((name) => !off.has(name));
}

type SplitFile = { error: string } | { frontMatter: string; body: string };

function splitFrontMatter(text: string): SplitFile {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0].trimEnd() !== '---') return { error: "missing front matter: start the file with a '---' line" };
  const end = lines.findIndex((line, index) => index > 0 && line.trimEnd() === '---');
  if (end === -1) return { error: "front matter is not closed: add a '---' line after it" };
  return { frontMatter: lines.slice(1, end).join('\n'), body: lines.slice(end + 1).join('\n') };
}

/**
 * Parses an agent file: YAML front matter between `---` lines, then the system prompt.
 * Never throws: a broken file comes back as an {@link AgentLoadError}.
 * @param path the file's path; it names the agent when the front matter has no `name`.
 * @param text the file's contents.
 */
export function parseAgentFile(path: string, text: string): ParseAgentFileResult {
  const parts = splitFrontMatter(text);
  if ('error' in parts) return { ok: false, error: agentLoadError(path, null, parts.error) };

  const frontMatter = readFrontMatter(parts.frontMatter);
  if (!frontMatter.ok) return { ok: false, error: agentLoadError(path, null, frontMatter.error) };
  const data = frontMatter.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { ok: false, error: agentLoadError(path, null, 'front matter must be YAML keys and values') };
  }

  const fileName = basename(path).replace(/\.md$/i, '');
  const nameProblem = {
    field: 'name',
    message: `the file name '${fileName}' is not a valid agent name ([a-z][a-z0-9_-]{0,63}): rename the file or set name`,
  };
  const needsName = !('name' in data) && !agentNamePattern.test(fileName);
  const result = agentFrontMatterSchema.safeParse(data);
  if (!result.success) {
    const problems = describeValidationErrors(result.error, knownKeys);
    return { ok: false, error: agentLoadErrors(path, needsName ? [nameProblem, ...problems] : problems) };
  }
  if (needsName) return { ok: false, error: agentLoadErrors(path, [nameProblem]) };

  const { name, description, model, tools, max_turns: maxTurns, mode, permissions, ...unknown } = result.data;
  const mapped = tools === undefined ? undefined : mapAgentToolNames(toolList(tools));
  const warnings = [
    ...(frontMatter.lenient === null ? [] : [`front matter is not valid YAML (${frontMatter.lenient}); read line by line, as Claude Code does`]),
    ...Object.keys(unknown).map(unknownKeyWarning),
    ...(mapped?.warnings ?? []),
  ];
  const agent: AgentDefinition = {
    name: name ?? fileName,
    description,
    model,
    tools: mapped?.tools,
    maxTurns,
    mode,
    ...(permissions && { permissions }),
    system: parts.body.trim(),
    source: path,
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(Object.keys(unknown).length > 0 ? { extra: unknown } : {}),
  };
  return { ok: true, agent };
}
