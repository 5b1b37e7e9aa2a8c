import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadAgents } from '../agents/load-agents.ts';
import type { ApprovalMode } from '../approvals/approval-broker.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel, type Script } from '../testing/index.ts';
import { createWorkspaceTools } from '../tools/workspace-tools.ts';
import { createCadre, type Cadre } from './create-cadre.ts';
import { toolOutputs } from './runtime-fixtures.ts';

// The box has a private /tmp: a Node under the host's temp folder (a clone there, as in a CI run
// from /tmp) is not visible inside, so the command finds the machine's own node on PATH instead.
const nodeInBox = process.execPath.startsWith(tmpdir()) ? 'node' : process.execPath;

let root: string;
let outside: string;
let home: string;
let server: Server;
let port: number;
const open: Cadre[] = [];

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'cadre-depth-')));
  outside = await realpath(await mkdtemp(join(tmpdir(), 'cadre-depth-outside-')));
  home = await realpath(await mkdtemp(join(tmpdir(), 'cadre-depth-home-')));
  await mkdir(join(root, '.cadre', 'agents'), { recursive: true });
  // Both agent files try to open what the session does not grant: rules that allow every
  // command, and a sandbox of their own with network and the whole disk.
  await writeFile(
    join(root, '.cadre', 'agents', 'lead.md'),
    [
      '---',
      'description: Leads',
      'tools: [bash]',
      'permissions: { allow: [exec, bash, "bash(*)"] }',
      'sandbox: { mode: off, network: true, writable: ["/"] }',
      '---',
      'Lead agent.',
    ].join('\n'),
  );
  await writeFile(
    join(root, '.cadre', 'agents', 'worker.md'),
    [
      '---',
      'description: Works',
      'tools: [bash]',
      'permissions: { allow: ["bash(*)", "bash(curl*)"] }',
      'sandbox: { network: true }',
      '---',
      'Worker agent.',
    ].join('\n'),
  );
  server = createServer((_request, response) => response.end('reached'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  for (const folder of [root, outside, home]) await rm(folder, { recursive: true, force: true });
});

const bash = (command: string) => ({ tool_calls: [{ name: 'bash', arguments: { command } }] });

function script(): Script {
  const fetchPage = `"${nodeInBox}" -e "fetch('http://127.0.0.1:${port}/').then(async (r) => console.log(await r.text()), () => { console.log('unreachable'); process.exit(7); })"`;
  return [
    {
      when: { system_includes: 'Worker agent' },
      turns: [
        bash(`echo worker > ${outside}/worker.txt`),
        bash(fetchPage),
        bash(`curl -sS http://127.0.0.1:${port}/`),
        bash('echo worker > inside-worker.txt'),
        { text: 'Worker done.' },
      ],
    },
    {
      when: { system_includes: 'Lead agent' },
      turns: [
        bash(`echo lead > ${outside}/lead.txt`),
        { tool_calls: [{ name: 'agent', arguments: { agent: 'worker', task: 'Work' } }] },
        { text: 'Lead done.' },
      ],
    },
    { turns: [{ tool_calls: [{ name: 'agent', arguments: { agent: 'lead', task: 'Lead' } }] }, { text: 'Done.' }] },
  ];
}

/** Every `bash` output of every session under `sessionId`, by agent, depth first. */
async function bashOutputs(cadre: Cadre, sessionId: string): Promise<Record<string, string[]>> {
  const outputs: Record<string, string[]> = {};
  for (const run of await cadre.store.listRuns({ parent_session_id: sessionId, order: 'oldest' })) {
    outputs[run.agent] = toolOutputs(await cadre.store.listMessages(run.child_session_id), 'bash');
    Object.assign(outputs, await bashOutputs(cadre, run.child_session_id));
  }
  return outputs;
}

async function runSession(approvals: ApprovalMode): Promise<{ outputs: Record<string, string[]>; unused: Record<string, string[]> }> {
  const agents = await loadAgents({ cwd: root, home, env: {} });
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    model: scriptedLanguageModel(script()),
    agents,
    tools: createWorkspaceTools({ root }),
    // The session grants no exec beyond asking, and denies curl outright.
    permissions: { deny: ['bash(curl*)'] },
    approvals,
    limits: { maxDepth: 2 },
    maxRetries: 0,
    onError: (error) => {
      throw error;
    },
  });
  open.push(cadre);
  const session = await cadre.createSession();
  await cadre.send(session.id, 'Go');
  await cadre.waitForIdle(session.id);
  const unused = Object.fromEntries(agents.list().map((agent) => [agent.name, Object.keys(agent.extra ?? {})]));
  return { outputs: await bashOutputs(cadre, session.id), unused };
}

describe.runIf(process.platform === 'linux')('agents at any depth stay inside what the session grants', () => {
  it("ignores an agent file's allow rules: without a person's yes, every bash call of depth 1 and 2 is denied", async () => {
    const { outputs, unused } = await runSession('deny');
    expect(outputs.lead).toEqual([expect.stringContaining('Permission denied')]);
    expect(outputs.worker).toHaveLength(4);
    for (const output of outputs.worker) expect(output).toContain('Permission denied');
    expect(outputs.worker[2]).toContain("by the rule deny 'bash(curl*)'");
    // The front matter's sandbox is no cadre key: kept as unused, never applied.
    expect(unused.lead).toContain('sandbox');
    expect(unused.worker).toContain('sandbox');
  });

  it("keeps approved commands at depth 1 and 2 in the session's sandbox: no write outside, no network, and a denied rule stays denied", async () => {
    const { outputs } = await runSession('yes');
    expect(outputs.lead).toEqual([expect.stringMatching(/No such file or directory|Read-only file system/)]);
    expect(outputs.worker[0]).toMatch(/No such file or directory|Read-only file system/);
    expect(outputs.worker[1]).toBe('unreachable\n[exit code: 7]');
    expect(outputs.worker[2]).toContain("by the rule deny 'bash(curl*)'");
    expect(outputs.worker[3]).toBe('(no output)\n[exit code: 0]');
    expect(await readFile(join(root, 'inside-worker.txt'), 'utf8')).toBe('worker\n');
    await expect(readFile(join(outside, 'lead.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readFile(join(outside, 'worker.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
