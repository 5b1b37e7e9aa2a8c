import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineAgent } from './agent-definition.ts';
import { agentFilesVersion, loadAgents } from './load-agents.ts';

let root: string;
let home: string;
let cwd: string;

async function writeAgent(directory: string, file: string, description: string, extra = '') {
  await mkdir(directory, { recursive: true });
  await writeFile(join(directory, file), `---\ndescription: ${description}\n${extra}---\nPrompt from ${description}\n`);
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'cadre-agents-'));
  home = join(root, 'home');
  cwd = join(root, 'project');
  await mkdir(cwd, { recursive: true });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('loadAgents', () => {
  it('loads only the built-ins when no directory exists', async () => {
    const registry = await loadAgents({ cwd, home });
    expect(registry.list().map((agent) => agent.name)).toEqual(['general', 'main']);
    expect(registry.errors).toEqual([]);
  });

  it('lets later places win on equal names: built-in, home, project, each --agents dir, then code', async () => {
    const homeDirectory = join(home, '.config', 'cadre', 'agents');
    const projectDirectory = join(cwd, '.cadre', 'agents');
    const first = join(root, 'first');
    const second = join(root, 'second');
    for (const name of ['general', 'a', 'b', 'c', 'd']) await writeAgent(homeDirectory, `${name}.md`, `home ${name}`);
    for (const name of ['a', 'b', 'c', 'd']) await writeAgent(projectDirectory, `${name}.md`, `project ${name}`);
    for (const name of ['b', 'c', 'd']) await writeAgent(first, `${name}.md`, `first ${name}`);
    for (const name of ['c', 'd']) await writeAgent(second, `${name}.md`, `second ${name}`);

    const registry = await loadAgents({
      cwd,
      home,
      dirs: ['../first', second],
      agents: [defineAgent({ name: 'd', description: 'code d' })],
    });

    const descriptions = Object.fromEntries(registry.list().map((agent) => [agent.name, agent.description]));
    expect(descriptions).toEqual({
      main: registry.get('main')?.description,
      general: 'home general',
      a: 'project a',
      b: 'first b',
      c: 'second c',
      d: 'code d',
    });
    expect(registry.get('main')?.source).toBe('built-in');
    expect(registry.get('c')?.source).toBe(join(second, 'c.md'));
    expect(registry.get('c')?.system).toBe('Prompt from second c');
    expect(registry.errors).toEqual([]);
  });

  it('reports broken files with path and field while the other files still load', async () => {
    const directory = join(cwd, '.cadre', 'agents');
    await writeAgent(directory, 'good.md', 'works');
    await writeFile(join(directory, 'no-description.md'), '---\nmode: subagent\n---\nBody');
    await writeFile(join(directory, 'bad-yaml.md'), '---\ndescription: [oops\n---\nBody');
    await writeFile(join(directory, 'notes.txt'), 'not an agent');

    const registry = await loadAgents({ cwd, home });

    expect(registry.get('good')?.description).toBe('works');
    expect(registry.errors.map((error) => [error.path, error.field])).toEqual([
      [join(directory, 'bad-yaml.md'), null],
      [join(directory, 'no-description.md'), 'description'],
    ]);
  });

  it('reports the second of two files in one directory that share a name', async () => {
    const directory = join(cwd, '.cadre', 'agents');
    await writeAgent(directory, 'a.md', 'first', 'name: same\n');
    await writeAgent(directory, 'b.md', 'second', 'name: same\n');

    const registry = await loadAgents({ cwd, home });

    expect(registry.get('same')?.description).toBe('first');
    expect(registry.errors).toHaveLength(1);
    expect(registry.errors[0]).toMatchObject({ path: join(directory, 'b.md'), field: 'name' });
    expect(registry.errors[0].message).toContain(join(directory, 'a.md'));
  });

  it('reports a missing --agents directory as an error entry instead of throwing', async () => {
    const registry = await loadAgents({ cwd, home, dirs: ['missing'] });
    expect(registry.errors).toEqual([
      {
        path: join(cwd, 'missing'),
        field: null,
        problems: [{ field: null, message: 'agents directory not found' }],
        message: `${join(cwd, 'missing')}: agents directory not found`,
      },
    ]);
    expect(registry.get('main')).toBeDefined();
  });

  it('reads a directory named twice only once', async () => {
    const directory = join(cwd, '.cadre', 'agents');
    await mkdir(directory, { recursive: true });
    await writeFile(join(directory, 'x.md'), 'broken');
    const registry = await loadAgents({ cwd, home, dirs: ['.cadre/agents'] });
    expect(registry.errors).toHaveLength(1);
  });

  it('finds the agents people already have, later places winning: ~/.claude, XDG cadre, ./.claude, ./.opencode, ./.cadre, --agents', async () => {
    const xdg = join(root, 'xdg');
    const places = [
      join(home, '.claude', 'agents'),
      join(xdg, 'cadre', 'agents'),
      join(cwd, '.claude', 'agents'),
      join(cwd, '.opencode', 'agent'),
      join(cwd, '.opencode', 'agents'),
      join(cwd, '.cadre', 'agents'),
      join(root, 'extra'),
    ];
    // Agent `p<i>` is defined in place i and every later one, so each place wins exactly one name.
    for (const [index, directory] of places.entries()) {
      for (let name = 0; name <= index; name++) await writeAgent(directory, `p${name}.md`, `place ${index}`);
    }
    await writeAgent(join(home, '.config', 'cadre', 'agents'), 'p9.md', 'ignored: XDG_CONFIG_HOME is set');
    const registry = await loadAgents({ cwd, home, env: { XDG_CONFIG_HOME: xdg }, dirs: [join(root, 'extra')] });
    const last = places.length - 1;
    expect(
      registry
        .list()
        .filter((agent) => agent.name.startsWith('p'))
        .map((agent) => [agent.name, agent.description]),
    ).toEqual(places.map((_, index) => [`p${index}`, `place ${last}`]));
    const withoutExtra = await loadAgents({ cwd, home, env: { XDG_CONFIG_HOME: xdg } });
    expect(
      withoutExtra
        .list()
        .filter((agent) => agent.name.startsWith('p'))
        .map((agent) => agent.source),
    ).toEqual([...places.slice(0, -1).map((_, index) => join(places[last - 1], `p${index}.md`))]);
    expect(registry.get('p9')).toBeUndefined();
    expect(registry.errors).toEqual([]);
  });

  it('reads ~/.config/cadre/agents without XDG_CONFIG_HOME, and gathers the warnings of the agents that loaded', async () => {
    await writeAgent(join(home, '.config', 'cadre', 'agents'), 'mine.md', 'mine', 'permissionMode: bypassPermissions\n');
    await writeAgent(join(home, '.claude', 'agents'), 'theirs.md', 'theirs', 'tools: Read, TodoWrite\ncolor: blue\n');
    const registry = await loadAgents({ cwd, home, env: {} });
    expect(registry.get('mine')?.source).toBe(join(home, '.config', 'cadre', 'agents', 'mine.md'));
    expect(registry.get('theirs')?.tools).toEqual({ kind: 'list', names: ['read_file', 'TodoWrite'] });
    expect(registry.warnings).toEqual([
      expect.stringMatching(new RegExp(`^${join(home, '.config', 'cadre', 'agents', 'mine.md')}: permissionMode: bypassPermissions not applied`)),
    ]);
  });

  it('reads subfolders, skips README.md, and names both files when two of one folder share an id', async () => {
    const folder = join(cwd, '.claude', 'agents');
    await writeAgent(join(folder, 'review'), 'code-reviewer.md', 'reviews');
    await writeAgent(folder, 'frontend.md', 'first', 'name: Frontend Developer\n');
    await writeAgent(folder, 'frontend-developer.md', 'second');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'README.md'), '# My agents\n');
    const registry = await loadAgents({ cwd, home });
    expect(registry.get('code-reviewer')?.description).toBe('reviews');
    expect(registry.get('frontend-developer')?.description).toBe('second');
    expect(registry.errors.map((error) => error.message)).toEqual([
      `${join(folder, 'frontend.md')}: name: 'frontend-developer' is also the id of ${join(folder, 'frontend-developer.md')}: two files of one folder cannot share an id; rename one`,
    ]);
  });

  it("takes an opencode agent's id from its file name, in subfolders too", async () => {
    await writeAgent(join(cwd, '.opencode', 'agent', 'subagents'), 'reviewer.md', 'reviews', 'name: CodeReviewer\n');
    const registry = await loadAgents({ cwd, home });
    expect(registry.get('reviewer')).toMatchObject({ displayName: 'CodeReviewer', description: 'reviews' });
  });
});

describe('agentFilesVersion', () => {
  it('changes when an agent file is written, added or removed in any place, and only then', async () => {
    const project = join(cwd, '.cadre', 'agents');
    await writeAgent(project, 'scout.md', 'scout');
    const first = await agentFilesVersion({ cwd, home });
    expect(await agentFilesVersion({ cwd, home })).toBe(first);
    // Same size, written again later: a new modification time.
    await new Promise((done) => setTimeout(done, 20));
    await writeAgent(project, 'scout.md', 'SCOUT');
    const edited = await agentFilesVersion({ cwd, home });
    expect(edited).not.toBe(first);
    await writeAgent(join(home, '.claude', 'agents'), 'lead.md', 'lead');
    const added = await agentFilesVersion({ cwd, home });
    expect(added).not.toBe(edited);
    await rm(join(project, 'scout.md'));
    expect(await agentFilesVersion({ cwd, home })).not.toBe(added);
  });
});
