import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentToolNames, delegationToolAliases } from '../src/agents/agent-tool-names.ts';
import { loadAgents } from '../src/agents/load-agents.ts';
import { reportAgent } from '../src/agents/report-agent.ts';
import { selectAgentTools } from '../src/agents/tool-selection.ts';
import type { RunRecord } from '../src/store/records.ts';
import { createWorkspaceTools } from '../src/tools/workspace-tools.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

// Published collections of agent files, as published, with their licences (see the folder's README.md).
const collections = resolve(import.meta.dirname, 'fixtures', 'agent-collections');
const claudeCollections = ['voltagent-awesome-claude-code-subagents', 'wshobson-agents', 'agency-agents'];
const workspaceTools = createWorkspaceTools({ root: tmpdir() });
const everyTool = Object.keys(workspaceTools).sort();

async function markdownFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md') && entry.name !== 'README.md')
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The `tools` line of a file as written: undefined when there is none or it is empty, as Claude Code reads it. */
function writtenTools(text: string): string | undefined {
  const frontMatter = text.split(/^---$/m)[1] ?? '';
  const line = /^tools:[ \t]*(.*)$/m.exec(frontMatter);
  return line === null || (line[1].trim() === '' && !/^tools:[ \t]*\n[ \t]+\S/m.test(frontMatter)) ? undefined : line[1];
}

/** A project with the collection in the folder its tool reads it from (opencode's for OpenAgents). */
async function loadCollection(root: string, collection: string) {
  if (claudeCollections.includes(collection)) return loadAgents({ cwd: root, home: root, env: {}, dirs: [join(collections, collection)] });
  const project = join(root, collection);
  await mkdir(join(project, '.opencode'), { recursive: true });
  await symlink(join(collections, collection, 'agent'), join(project, '.opencode', 'agent'));
  return loadAgents({ cwd: project, home: root, env: {} });
}

describe('published collections of agent files', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'cadre-collections-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it.each([...claudeCollections, 'openagents'])(
    '%s: every file loads, none without tools is left toolless, none fails for a tool it cannot have',
    async (collection) => {
      const files = await markdownFiles(join(collections, collection));
      const registry = await loadCollection(root, collection);
      expect(registry.errors).toEqual([]);
      const agents = registry.list().filter((agent) => agent.source !== 'built-in');
      expect(agents).toHaveLength(files.length);
      for (const agent of agents) {
        const text = await readFile(agent.source, 'utf8');
        const selected = selectAgentTools(agent, workspaceTools);
        const written = writtenTools(text);
        if (written === undefined) {
          // As in Claude Code and opencode: every tool, less what the file turns off.
          expect(agent.tools, agent.source).toEqual({ kind: 'all' });
          expect(selected.names.length, agent.source).toBe(everyTool.length - (agent.disallowedTools ?? []).filter((name) => everyTool.includes(name)).length);
        } else if (agent.tools.kind === 'list') {
          // Every listed tool cadre has an equivalent of is given; the others are left out, never an error.
          for (const name of agent.tools.names) if (everyTool.includes(name)) expect(selected.names, agent.source).toContain(name);
          const claudeNames = written
            .replace(/^\[|\]$/g, '')
            .split(',')
            .map((name) => name.trim().replace(/\(.*\)$/, ''))
            .filter(Boolean);
          // Delegation tools (Task, Agent, SendMessage -> agent_send) come with delegation, not the workspace.
          for (const name of claudeNames)
            if (Object.hasOwn(agentToolNames, name) && !delegationToolAliases.has(agentToolNames[name]))
              expect(selected.names, agent.source).toContain(agentToolNames[name]);
          expect([...selected.names, ...selected.missing].length, agent.source).toBe(agent.tools.names.length);
        }
        const { warning } = reportAgent(agent, { tools: workspaceTools, env: {} });
        if (warning !== null) expect(warning.startsWith(`${agent.source}: `) && !warning.includes('\n'), warning).toBe(true);
      }
    },
  );

  it('reads the names people write: dots, spaces and capitals', async () => {
    const volt = await loadCollection(root, 'voltagent-awesome-claude-code-subagents');
    expect(volt.get('dotnet-framework-4.8-expert')).toBeDefined();
    expect(volt.get('powershell-5.1-expert')).toBeDefined();
    const agency = await loadCollection(root, 'agency-agents');
    expect(agency.get('frontend-developer')).toMatchObject({ displayName: 'Frontend Developer', color: 'cyan', tools: { kind: 'all' } });
  });
});

describe('agents of published collections, run from the command line', () => {
  let workspace: Workspace;
  beforeAll(async () => {
    workspace = await createWorkspace({ script: resolve(import.meta.dirname, 'fixtures', 'agent-collections-script.yaml') });
    const claude = join(workspace.cwd, '.claude', 'agents');
    const opencode = join(workspace.cwd, '.opencode', 'agent');
    await mkdir(claude, { recursive: true });
    await mkdir(opencode, { recursive: true });
    for (const file of [
      'wshobson-agents/plugins/agent-teams/agents/team-reviewer.md',
      'wshobson-agents/plugins/backend-development/agents/backend-architect.md',
      'voltagent-awesome-claude-code-subagents/categories/02-language-specialists/dotnet-framework-4.8-expert.md',
      'voltagent-awesome-claude-code-subagents/categories/04-quality-security/ui-ux-tester.md',
      'agency-agents/engineering/engineering-frontend-developer.md',
    ]) {
      await cp(join(collections, file), join(claude, file.split('/').at(-1)!));
    }
    await cp(join(collections, 'openagents/agent/subagents/code/reviewer.md'), join(opencode, 'reviewer.md'));
  });
  afterAll(() => workspace.close());

  /** The tools the model was offered in the first request whose system prompt holds `phrase`, less the delegation tools every agent has. */
  function offeredTools(phrase: string): string[] {
    const request = workspace.server.requests.find((candidate) => candidate.system.includes(phrase));
    expect(request, phrase).toBeDefined();
    return request!.tools.filter((name) => !name.startsWith('agent')).sort();
  }

  it('runs five as subagents with the tools Claude Code and opencode would give them, whatever model and tools their files name', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, '--yes', 'run the five collection agents']);
    expect(result.stderr).not.toMatch(/warning|failed/);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('All five reported.\n');
    const sessionId = result.stderr.match(/Session (ses_\w+)/)![1];
    const runs = await workspace.json<RunRecord[]>(['runs', sessionId]);
    expect(runs.map((run) => [run.agent, run.status]).sort()).toEqual([
      ['backend-development-backend-architect', 'completed'],
      ['dotnet-framework-4.8-expert', 'completed'],
      ['reviewer', 'completed'],
      ['team-reviewer', 'completed'],
      ['ui-ux-tester', 'completed'],
    ]);
    // Team tools (TaskList, SendMessage, ...) are left out; Read, Glob, Grep, Bash are there.
    expect(offeredTools('specialized code reviewer focused on one assigned review dimension')).toEqual(['bash', 'grep', 'list_files', 'read_file']);
    // No tools line: every tool.
    expect(offeredTools('You are a backend system architect')).toEqual(everyTool);
    expect(offeredTools('You are a senior .NET Framework 4.8 expert')).toEqual(everyTool);
    // WebSearch, chrome-mcp and computer-use are left out.
    expect(offeredTools('You are a senior QA Automation Engineer and UX Researcher')).toEqual(everyTool);
    // opencode: bash, edit and write turned off.
    expect(offeredTools('# Review Agent')).toEqual(['grep', 'list_files', 'read_file']);
    expect(await readFile(join(workspace.cwd, 'design', 'api.md'), 'utf8')).toBe('# API\n');
    expect(await readFile(join(workspace.cwd, 'notes.txt'), 'utf8')).toBe('Remember the oat milk.\n');
    // Delegation is there for the agents that list Claude Code's Task tool and for those that do not.
    expect(delegationToolAliases.has('Task')).toBe(true);
  });

  it('runs one as the primary agent by its slugged name, with every tool', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, '--yes', '--agent', 'frontend-developer', 'make a button']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Frontend Developer wrote ui/button.tsx.\n');
    expect(offeredTools('Frontend Developer Agent Personality')).toEqual(everyTool);
    expect(await readFile(join(workspace.cwd, 'ui', 'button.tsx'), 'utf8')).toBe('export const Button = 1;\n');
  });

  it('cadre agents prints at most one warning line per file and lists unused keys once, for whole collections', async () => {
    for (const collection of claudeCollections) {
      const files = await markdownFiles(join(collections, collection));
      const result = await workspace.run(['agents', '--agents', join(collections, collection), '--db', workspace.database]);
      expect(result.code).toBe(0);
      const lines = result.stderr.split('\n').filter(Boolean);
      expect(lines.filter((line) => line.includes('did not load'))).toEqual([]);
      const warned = lines.filter((line) => line.startsWith('warning: ')).map((line) => line.slice('warning: '.length).split(': ')[0]);
      expect(new Set(warned).size).toBe(warned.length);
      expect(warned.length).toBeLessThanOrEqual(files.length);
      expect(lines.filter((line) => line.startsWith('note: front-matter keys')).length).toBeLessThanOrEqual(1);
      expect(lines.filter((line) => line.startsWith('note: agents run on the session')).length).toBeLessThanOrEqual(1);
      expect(lines.length).toBeLessThanOrEqual(warned.length + 2);
    }
  });
});
