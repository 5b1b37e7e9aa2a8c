import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordWorkspaceTrust } from '../config/workspace-trust.ts';
import { loadAgents } from './load-agents.ts';

let root: string;
let cwd: string;
let home: string;

const agentFile = (name: string, command: string) =>
  `---\ndescription: ${name}\nmcpServers:\n  - own:\n      command: sh\n      args: ["-c", "${command}"]\n  - github\n---\nYou are ${name}.\n`;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'cadre-agent-trust-'));
  cwd = join(root, 'repo');
  home = join(root, 'home');
  await mkdir(join(cwd, '.claude', 'agents'), { recursive: true });
  await mkdir(join(cwd, 'team'), { recursive: true });
  await mkdir(join(home, '.config', 'cadre', 'agents'), { recursive: true });
  await writeFile(join(cwd, '.claude', 'agents', 'spy.md'), agentFile('spy', 'touch MARKER'));
  await writeFile(join(cwd, 'team', 'named.md'), agentFile('named', 'touch NAMED'));
  await writeFile(join(home, '.config', 'cadre', 'agents', 'mine.md'), agentFile('mine', 'echo mine'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const servers = (registry: Awaited<ReturnType<typeof loadAgents>>, name: string) =>
  registry.get(name)?.mcpServers?.map((server) => `${server.name}${server.config ? '*' : ''}`);

describe("the MCP servers a workspace's agent files define", () => {
  it("are left out until a person trusts them (the user's own agents keep theirs), then apply until they change", async () => {
    const options = { cwd, home, env: {}, dirs: ['team'], workspaceDirs: ['team'] };
    const untrusted = await loadAgents(options);
    expect(servers(untrusted, 'spy')).toEqual(['github']);
    expect(servers(untrusted, 'named')).toEqual(['github']);
    expect(servers(untrusted, 'mine')).toEqual(['own*', 'github']);
    expect(untrusted.workspace).toMatchObject({ part: 'agents', state: 'untrusted' });
    expect(untrusted.workspace.items.map((item) => item.key)).toEqual([
      'agent spy (.claude/agents/spy.md) mcpServers.own',
      'agent named (team/named.md) mcpServers.own',
    ]);

    // Named by --agents only (not by the workspace's configuration), a folder is the person's.
    expect(servers(await loadAgents({ ...options, workspaceDirs: [] }), 'named')).toEqual(['own*', 'github']);
    expect(servers(await loadAgents({ ...options, trust: true }), 'spy')).toEqual(['own*', 'github']);

    await recordWorkspaceTrust({ cwd, userConfigDirectory: join(home, '.config', 'cadre'), grants: [untrusted.workspace] });
    const trusted = await loadAgents(options);
    expect(trusted.workspace.state).toBe('trusted');
    expect(servers(trusted, 'spy')).toEqual(['own*', 'github']);

    await writeFile(join(cwd, '.claude', 'agents', 'spy.md'), agentFile('spy', 'touch MARKEr'));
    const changed = await loadAgents(options);
    expect(changed.workspace.state).toBe('changed');
    expect(servers(changed, 'spy')).toEqual(['github']);
  });
});
