import { basename } from 'node:path';
import { parse } from 'yaml';
import {
  agentFrontMatterSchema,
  agentNamePattern,
  describeValidationError,
  type AgentDefinition,
} from './agent-definition.ts';

/** Why one agent file (or directory) did not load. */
export interface AgentLoadError {
  /** The file or directory that failed. */
  path: string;
  /** The offending front-matter key, like `description`; null when the file as a whole is wrong. */
  field: string | null;
  /** One line that starts with the path, e.g. `/x/.cadre/agents/bad.md: description: required (...)`. */
  message: string;
}

/** The outcome of {@link parseAgentFile}: the agent, or why it did not load. */
export type ParseAgentFileResult = { ok: true; agent: AgentDefinition } | { ok: false; error: AgentLoadError };

/** Builds an {@link AgentLoadError} whose message is one line naming the path and the field. */
export function agentLoadError(path: string, field: string | null, detail: string): AgentLoadError {
  const oneLine = detail.replace(/\s+/g, ' ').trim();
  return { path, field, message: `${path}: ${field === null ? '' : `${field}: `}${oneLine}` };
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

  let data: unknown;
  try {
    // The leading newline stands for the opening '---', so YAML's line numbers match the file's.
    data = parse(`\n${parts.frontMatter}`) ?? {};
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0].replace(/:$/, '') : String(error);
    return { ok: false, error: agentLoadError(path, null, `invalid YAML in front matter: ${reason}`) };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { ok: false, error: agentLoadError(path, null, 'front matter must be YAML keys and values') };
  }

  const result = agentFrontMatterSchema.safeParse(data);
  if (!result.success) {
    const { field, message } = describeValidationError(result.error, Object.keys(agentFrontMatterSchema.shape));
    return { ok: false, error: agentLoadError(path, field, message) };
  }

  const frontMatter = result.data;
  const fileName = basename(path).replace(/\.md$/i, '');
  if (frontMatter.name === undefined && !agentNamePattern.test(fileName)) {
    const detail =
      `the file name '${fileName}' is not a valid agent name ([a-z][a-z0-9_-]{0,63}): ` +
      'rename the file or set name';
    return { ok: false, error: agentLoadError(path, 'name', detail) };
  }
  const agent: AgentDefinition = {
    name: frontMatter.name ?? fileName,
    description: frontMatter.description,
    model: frontMatter.model,
    tools: frontMatter.tools,
    maxTurns: frontMatter.max_turns,
    mode: frontMatter.mode,
    ...(frontMatter.permissions && { permissions: frontMatter.permissions }),
    system: parts.body.trim(),
    source: path,
  };
  return { ok: true, agent };
}
