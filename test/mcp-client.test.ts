import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createAgentTools } from '../src/mcp/client/agent-tools.ts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMcpClients, type McpClients } from '../src/mcp/client/mcp-clients.ts';
import { createCadre, type Cadre } from '../src/runtime/create-cadre.ts';
import { toolOutputs } from '../src/runtime/runtime-fixtures.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel } from '../src/testing/index.ts';
import { toolInfo } from '../src/tools/define-tool.ts';
import { defineAgent } from '../src/agents/agent-definition.ts';

const fixture = resolve(import.meta.dirname, 'fixtures', 'mcp-fixture-server.ts');
const stdio = (...args: string[]) => ({ command: process.execPath, args: [fixture, ...args] });
const call = { toolCallId: 'call_1', messages: [], context: {} } as never;

const open: Array<McpClients | Cadre> = [];
afterEach(async () => {
  for (const item of open.splice(0)) await item.close();
});

let httpServer: ChildProcess;
let httpUrl = '';
beforeAll(async () => {
  httpServer = spawn(process.execPath, [fixture, '--http'], { stdio: ['ignore', 'ignore', 'pipe'] });
  httpUrl = await new Promise<string>((resolveUrl, reject) => {
    httpServer.stderr!.on('data', (chunk: Buffer) => {
      const port = /listening (\d+)/.exec(chunk.toString())?.[1];
      if (port) resolveUrl(`http://127.0.0.1:${port}/mcp`);
    });
    httpServer.on('exit', () => reject(new Error('the HTTP fixture exited')));
  });
});
afterAll(() => {
  httpServer.kill();
});

function clients(servers: Parameters<typeof createMcpClients>[0]['servers'], options: Partial<Parameters<typeof createMcpClients>[0]> = {}): McpClients {
  const made = createMcpClients({ servers, ...options });
  open.push(made);
  return made;
}

describe('MCP servers of a run in its own worktree', () => {
  it('start there, for that run alone, and close with it; the shared ones stay where they are', async () => {
    const place = realpathSync(mkdtempSync(join(tmpdir(), 'cadre-mcp-place-')));
    try {
      const agentTools = createAgentTools({
        workspaceTools: {},
        mcpServers: { fx: stdio('--cwd-tool') },
        onError: (error) => {
          throw error;
        },
      });
      const agent = defineAgent({ name: 'user', description: 'Uses fx', tools: ['mcp__fx__*'] });
      const placed = await agentTools.availableAt(agent, { root: place });
      expect(await placed.tools.mcp__fx__cwd!.execute!({}, call)).toBe(place);
      const shared = await agentTools.available(agent);
      expect(await shared.mcp__fx__cwd!.execute!({}, call)).toBe(process.cwd());
      await placed.close();
      await expect(placed.tools.mcp__fx__cwd!.execute!({}, call)).rejects.toThrow();
      expect(await shared.mcp__fx__cwd!.execute!({}, call)).toBe(process.cwd());
    } finally {
      rmSync(place, { recursive: true, force: true });
    }
  });
});

describe('MCP client', () => {
  it("gives a stdio server's tools as mcp__<server>__<tool>, read-only ones at risk read, and calls them", async () => {
    const mcp = clients({ fx: { config: stdio(), source: 'test' } });
    expect(mcp.status()[0]?.state).toBe('not started');
    const { tools, failures } = await mcp.tools(['fx']);
    expect(failures).toEqual([]);
    expect(Object.keys(tools).sort()).toEqual(['mcp__fx__add', 'mcp__fx__crash', 'mcp__fx__echo', 'mcp__fx__fail', 'mcp__fx__hang']);
    expect(toolInfo(tools.mcp__fx__echo!)?.risk).toBe('read');
    expect(toolInfo(tools.mcp__fx__add!)?.risk).toBe('network');
    expect(await tools.mcp__fx__echo!.execute!({ text: 'hi' }, call)).toBe('echo: hi');
    expect(await tools.mcp__fx__add!.execute!({ a: 2, b: 3 }, call)).toBe('5');
    await expect(tools.mcp__fx__add!.execute!({ a: 'two' }, call)).rejects.toThrow(/Invalid input for tool 'mcp__fx__add'/);
    await expect(tools.mcp__fx__fail!.execute!({}, call)).rejects.toThrow('the fixture refuses');
    // Started once, shared: asking again starts nothing new.
    const again = await mcp.tools(['fx']);
    expect(Object.keys(again.tools)).toHaveLength(5);
    expect(mcp.status()[0]).toMatchObject({ name: 'fx', state: 'ready', error: null });
  });

  it('does not believe readOnlyHint from a server whose annotations are not trusted', async () => {
    const mcp = clients({ fx: { config: stdio(), source: '.mcp.json', trustAnnotations: false } });
    const { tools } = await mcp.tools(['fx']);
    expect(toolInfo(tools.mcp__fx__echo!)?.risk).toBe('network');
  });

  it('reports a server that crashes mid-call as a tool error, and later calls say it is gone', async () => {
    const mcp = clients({ fx: { config: stdio(), source: 'test' } });
    const { tools } = await mcp.tools(['fx']);
    await expect(tools.mcp__fx__crash!.execute!({}, call)).rejects.toThrow(/MCP tool crash of server 'fx' failed: the server went away during the call/);
    await expect(tools.mcp__fx__echo!.execute!({ text: 'x' }, call)).rejects.toThrow(/MCP server 'fx' is not running \(exited/);
    expect(mcp.status()[0]?.state).toBe('exited');
  });

  it('reports a server that fails to start, with what it said, while the others go on', async () => {
    const mcp = clients({
      broken: { config: stdio('--fail'), source: 'test' },
      fx: { config: stdio(), source: 'test' },
      missing: { config: { command: '/nonexistent/mcp-server' }, source: 'test' },
    });
    const { tools, failures } = await mcp.tools(['broken', 'fx', 'missing']);
    expect(Object.keys(tools)).toContain('mcp__fx__echo');
    expect(failures.map((failure) => failure.server).sort()).toEqual(['broken', 'missing']);
    expect(failures.find((failure) => failure.server === 'broken')?.message).toMatch(/MCP server 'broken' \(test\) failed to start: .*missing FIXTURE_TOKEN/);
    expect(mcp.status().find((status) => status.name === 'missing')?.state).toBe('failed');
  });

  it('ends a call that hangs at the tool timeout, and at once on a stop', async () => {
    const mcp = clients({ fx: { config: stdio(), source: 'test' } }, { toolTimeoutMs: 300 });
    const { tools } = await mcp.tools(['fx']);
    const started = Date.now();
    await expect(tools.mcp__fx__hang!.execute!({}, call)).rejects.toThrow(/no answer within 0.3 s/);
    expect(Date.now() - started).toBeLessThan(3000);
    const stop = new AbortController();
    const hanging = tools.mcp__fx__hang!.execute!({}, { ...(call as object), abortSignal: stop.signal } as never);
    setTimeout(() => stop.abort(new Error('stopped by a person')), 50);
    await expect(hanging).rejects.toThrow('stopped by a person');
  });

  it('uses a server over streamable HTTP with its headers', async () => {
    const mcp = clients({
      web: { config: { type: 'http', url: httpUrl, headers: { Authorization: 'Bearer fixture-token' } }, source: 'test' },
      denied: { config: { type: 'http', url: httpUrl }, source: 'test' },
    });
    const { tools, failures } = await mcp.tools(['web', 'denied']);
    expect(await tools.mcp__web__echo!.execute!({ text: 'over http' }, call)).toBe('echo: over http');
    expect(failures.map((failure) => failure.server)).toEqual(['denied']);
  });
});

describe('MCP tools in runs', () => {
  it('gives a subagent the tools its list names with a trailing *, under the same approvals, and tells it of a server that failed', async () => {
    const requests: Array<{ system: string }> = [];
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      maxRetries: 0,
      approvals: 'deny',
      mcpServers: { fx: { ...stdio(), env: { FIXTURE_KEY: 'fixture-secret-value-123' } }, broken: stdio('--fail') },
      agents: [
        defineAgent({
          name: 'helper',
          description: 'Uses MCP tools.',
          system: 'You are the helper.',
          tools: ['mcp__fx__*', 'mcp__broken__*'],
          mode: 'subagent',
        }),
      ],
      model: scriptedLanguageModel((request) => {
        if (request.system.includes('You are the helper')) {
          requests.push(request);
          if (request.turn === 0)
            return {
              tool_calls: [
                { name: 'mcp__fx__echo', arguments: { text: 'from a run fixture-secret-value-123' } },
                { name: 'mcp__fx__add', arguments: { a: 1, b: 2 } },
              ],
            };
          return { text: 'helper done' };
        }
        if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'helper', task: 'use the tools' } }] };
        return { text: 'done' };
      }),
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(run?.status).toBe('completed');
    const messages = await cadre.store.listMessages(run!.child_session_id);
    // A configured server's env values are secrets: they never reach the transcript.
    expect(toolOutputs(messages, 'mcp__fx__echo')).toEqual(['echo: from a run [redacted]']);
    expect(JSON.stringify(messages)).not.toContain('fixture-secret-value-123');
    // Risk network asks, and nobody can answer here: denied, as any such call.
    expect(JSON.stringify(messages)).toMatch(/Permission denied: mcp__fx__add/);
    expect(requests[0]?.system).toMatch(/Note: MCP server 'broken' \(configuration\) failed to start: .*Its tools are not available/);
  });

  it("adds the servers an agent file defines in its own mcpServers, for that agent's runs only", async () => {
    const offered: string[][] = [];
    const cadre = createCadre({
      store: createSqliteStore({ path: ':memory:' }),
      maxRetries: 0,
      approvals: 'deny',
      tools: {},
      agents: [
        defineAgent({
          name: 'owner',
          description: 'Has its own server.',
          system: 'You are the owner.',
          mode: 'subagent',
          mcpServers: [{ name: 'own', config: stdio() }],
        }),
      ],
      model: scriptedLanguageModel((request) => {
        if (request.system.includes('You are the owner')) {
          offered.push([...request.tools]);
          return request.turn === 0 ? { tool_calls: [{ name: 'mcp__own__echo', arguments: { text: 'mine' } }] } : { text: 'owner done' };
        }
        offered.push([...request.tools]);
        if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'owner', task: 'use your server' } }] };
        return { text: 'done' };
      }),
    });
    open.push(cadre);
    const session = await cadre.createSession();
    await cadre.send(session.id, 'go');
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(toolOutputs(await cadre.store.listMessages(run!.child_session_id), 'mcp__own__echo')).toEqual(['echo: mine']);
    // The primary agent does not get the owner's server.
    expect(offered[0]).not.toContain('mcp__own__echo');
    expect(offered[1]).toContain('mcp__own__echo');
  });
});

describe("a project's .mcp.json", () => {
  it('starts its servers only once a person trusts them, and again after a change to one', async () => {
    const { createWorkspace } = await import('./helpers/cadre-cli.ts');
    const { writeFile } = await import('node:fs/promises');
    const workspace = await createWorkspace();
    try {
      const write = (args: string[]) =>
        writeFile(`${workspace.cwd}/.mcp.json`, JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [fixture, ...args] } } }));
      await write([]);
      const before = await workspace.run(['mcp', 'list']);
      expect(before.stdout).toContain('fx (.mcp.json, not trusted: cadre mcp trust)');
      expect(before.stdout).not.toContain('mcp__fx__echo');
      const trust = await workspace.run(['mcp', 'trust']);
      expect(trust.code).toBe(0);
      expect(trust.stdout).toContain(`trusted fx: ${process.execPath} ${fixture}`);
      const after = await workspace.run(['mcp', 'list']);
      expect(after.code).toBe(0);
      expect(after.stdout).toContain('fx (.mcp.json): 5 tools');
      expect(after.stdout).toContain('  mcp__fx__echo');
      await write(['--changed']);
      const changed = await workspace.run(['mcp', 'list']);
      expect(changed.stdout).toContain('fx (.mcp.json, changed since trusted: cadre mcp trust)');
      await writeFile(
        `${workspace.cwd}/.mcp.json`,
        JSON.stringify({
          mcpServers: { fx: { command: process.execPath, args: [fixture] }, broken: { command: process.execPath, args: [fixture, '--fail'] } },
        }),
      );
      expect((await workspace.run(['mcp', 'trust', 'broken'])).code).toBe(0);
      const agents = await workspace.run(['agents', '--json']);
      expect(agents.stderr).toMatch(/warning: MCP server 'broken' \(\.mcp\.json\) failed to start: .*missing FIXTURE_TOKEN/);
      const report = JSON.parse(agents.stdout) as {
        agents: Array<{ name: string; tools: string[] }>;
        mcp_server_status: Array<{ name: string; state: string }>;
      };
      expect(report.mcp_server_status.map((server) => [server.name, server.state]).sort()).toEqual([
        ['broken', 'failed'],
        ['fx', 'ready'],
      ]);
      expect(report.agents.find((agent) => agent.name === 'general')?.tools).toContain('mcp__fx__echo');
      const unknown = await workspace.run(['mcp', 'trust', 'nope']);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain("has no server 'nope'. Its servers: fx, broken");
    } finally {
      await workspace.close();
    }
  });
});
