import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../src/store/records.ts';
import { startScriptedServer, type ScriptedServer } from '../src/testing/index.ts';
import { cadreBin, createWorkspace, type Workspace } from './helpers/cadre-cli.ts';
import { eventually } from './helpers/eventually.ts';

let workspace: Workspace;
let model: ScriptedServer;
beforeAll(async () => {
  workspace = await createWorkspace();
  await writeFile(
    join(workspace.cwd, '.cadre', 'agents', 'writer.md'),
    '---\ndescription: Writes files.\ntools: [write_file]\nmode: subagent\n---\nYou are the writer.\n',
  );
  model = await startScriptedServer({
    script: [
      { when: { system_includes: 'general-purpose', user_includes: 'slow' }, turns: [{ text: 'Slow answer: {{task}}', delay_ms: 2500 }] },
      {
        when: { system_includes: 'You are the writer' },
        turns: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'hello' } }] }, { text: 'Wrote out.txt.' }],
      },
      { when: { system_includes: 'general-purpose', user_includes: 'shaped' }, turns: [{ tool_calls: [{ name: 'final_result', arguments: { answer: 42 } }] }] },
      { when: { system_includes: 'general-purpose' }, turns: [{ text: 'Answer to: {{task}}' }] },
    ],
  });
});
afterAll(async () => {
  await model.close();
  await workspace.close();
});

/** The model flags of `cadre mcp`, with the workspace's database. */
const flags = () => ['--model', 'openai-compatible:scripted', '--base-url', model.baseURL, '--db', workspace.database];

interface Connection {
  client: Client;
  logs: string[];
  stderr: () => string;
  pid: number;
  close(): Promise<void>;
}

async function connect({ elicit }: { elicit?: (message: string) => { decision: string } | null } = {}): Promise<Connection> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cadreBin, 'mcp', ...flags()],
    cwd: workspace.cwd,
    env: workspace.env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'cadre-test', version: '1.0.0' }, { capabilities: elicit ? { elicitation: { form: {} } } : {} });
  const logs: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    logs.push(String(notification.params.data));
  });
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      const answer = elicit(request.params.message);
      return answer ? { action: 'accept', content: answer } : { action: 'decline' };
    });
  }
  await client.connect(transport);
  return { client, logs, stderr: () => stderr, pid: transport.pid!, close: () => client.close() };
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

async function _runs(): Promise<RunRecord[]> {
  return workspace.json<RunRecord[]>(['runs', '--all']).catch(async () => workspace.json<RunRecord[]>(['runs']));
}

describe('cadre mcp', () => {
  it('offers the six delegation tools with section 3 inputs and outputs, agent as an optional task', async () => {
    const connection = await connect();
    try {
      const { tools } = await connection.client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['agent', 'agent_parallel', 'agent_list', 'agent_output', 'agent_stop', 'agent_send']);
      const agent = tools.find((tool) => tool.name === 'agent')!;
      expect(agent.execution?.taskSupport).toBe('optional');
      expect(Object.keys(agent.inputSchema.properties ?? {})).toEqual([
        'agent',
        'task',
        'description',
        'context',
        'run_in_background',
        'max_turns',
        'resume',
        'output_schema',
        'isolation',
      ]);
      expect(agent.description).toContain('general:');
      // cadre does not hold the host's conversation, so it offers no fork and says so.
      expect(agent.description).toContain('fork is not offered here');

      const answer = text(await connection.client.callTool({ name: 'agent', arguments: { agent: 'general', task: 'What is in notes.txt?' } }));
      expect(answer).toMatch(/^run_id: run_\w+\nagent: general\nstatus: completed\n\nAnswer to: What is in notes.txt\?$/);

      const output_schema = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] };
      const shaped = text(await connection.client.callTool({ name: 'agent', arguments: { agent: 'general', task: 'shaped answer', output_schema } }));
      expect(shaped).toMatch(/^run_id: run_\w+\nagent: general\nstatus: completed\noutput: json\n\n\{\n {2}"answer": 42\n\}$/);
      const badSchema = await connection.client.callTool({ name: 'agent', arguments: { agent: 'general', task: 'x', output_schema: { type: 'array' } } });
      expect(badSchema.isError).toBe(true);
      expect(text(badSchema)).toContain('output_schema: the top level must be an object');

      const unknown = await connection.client.callTool({ name: 'agent', arguments: { agent: 'nobody', task: 'x' } });
      expect(unknown.isError).toBe(true);
      expect(text(unknown)).toContain("Unknown agent 'nobody'. Available agents:");
      const bad = await connection.client.callTool({ name: 'agent_output', arguments: { run_id: 'run_nope' } });
      expect(text(bad)).toBe("No subagent run 'run_nope' in this session.");
    } finally {
      await connection.close();
    }
  });

  it('announces a finished background run as a log message, read then with agent_output', async () => {
    const connection = await connect();
    try {
      const started = text(
        await connection.client.callTool({ name: 'agent', arguments: { agent: 'general', task: 'quick background job', run_in_background: true } }),
      );
      const runId = /run_id: (run_\w+)/.exec(started)![1];
      expect(started).toContain('note: Started in the background.');
      await expect.poll(() => connection.logs.join('\n'), { timeout: 10_000 }).toContain(`run_id: ${runId}`);
      expect(connection.logs.join('\n')).toMatch(/^<subagent-notification>/);
      expect(connection.logs.join('\n')).toContain('status: completed');
      const output = text(await connection.client.callTool({ name: 'agent_output', arguments: { run_id: runId } }));
      expect(output).toBe(`run_id: ${runId}\nagent: general\nstatus: completed\n\nAnswer to: quick background job`);
      const listing = text(await connection.client.callTool({ name: 'agent_list', arguments: { status: 'all' } }));
      expect(listing).toContain(`${runId} | completed | general | quick background job`);
      // A message to the finished run starts its follow-up on the same child session and waits for it.
      const followUp = text(await connection.client.callTool({ name: 'agent_send', arguments: { run_id: runId, message: 'And once more.' } }));
      expect(followUp).toMatch(/^run_id: run_\w+\nagent: general\nstatus: completed\nnote: A follow-up of run /);
      expect(followUp).not.toContain(`run_id: ${runId}\n`);
      const empty = await connection.client.callTool({ name: 'agent_send', arguments: { run_id: runId, message: ' ' } });
      expect(empty.isError).toBe(true);
    } finally {
      await connection.close();
    }
  });

  it('runs agent as a task (task id = run id) that another cadre mcp process reads and cancels', async () => {
    const first = await connect();
    const second = await connect();
    try {
      const created = await first.client.request(
        { method: 'tools/call', params: { name: 'agent', arguments: { agent: 'general', task: 'slow task one' }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;
      expect(taskId).toMatch(/^run_/);
      expect(created.task.status).toBe('working');
      // The other process sees the same task: it is the run in the shared database.
      const seen = await second.client.experimental.tasks.getTask(taskId);
      expect(seen.status).toBe('working');
      const cancelled = await second.client.experimental.tasks.cancelTask(taskId);
      expect(cancelled.status).toBe('cancelled');
      await expect.poll(async () => (await first.client.experimental.tasks.getTask(taskId)).status, { timeout: 10_000 }).toBe('cancelled');
      const run = (await workspace.json<RunRecord>(['show', taskId]).catch(() => null)) as RunRecord | { run: RunRecord } | null;
      const record = run && 'run' in run ? run.run : run;
      expect(record?.status).toBe('canceled_by_parent');

      const finished = await first.client.request(
        { method: 'tools/call', params: { name: 'agent', arguments: { agent: 'general', task: 'task two' }, task: {} } },
        CreateTaskResultSchema,
      );
      const result = await second.client.experimental.tasks.getTaskResult(finished.task.taskId, CallToolResultSchema);
      expect(text(result)).toBe(`run_id: ${finished.task.taskId}\nagent: general\nstatus: completed\n\nAnswer to: task two`);
      const listed = await second.client.experimental.tasks.listTasks();
      expect(listed.tasks.map((task) => task.taskId)).toEqual(expect.arrayContaining([taskId, finished.task.taskId]));
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('keeps a run going after its client disconnects mid-run, and a new connection reads it', async () => {
    const first = await connect();
    const started = text(
      await first.client.callTool({ name: 'agent', arguments: { agent: 'general', task: 'slow job after disconnect', run_in_background: true } }),
    );
    const runId = /run_id: (run_\w+)/.exec(started)![1];
    const foreground = first.client.callTool({ name: 'agent', arguments: { agent: 'general', task: 'slow foreground job' } }).catch((error: unknown) => error);
    // The foreground run has reached its model: its subagent is working when the client goes.
    await eventually(
      () => model.requests.some((request) => request.system.includes('general-purpose') && JSON.stringify(request.messages).includes('slow foreground job')),
      {
        what: 'the foreground run at its model',
      },
    );
    await first.close();
    await foreground;
    const second = await connect();
    try {
      // It ends in the first process, which stays for it; this connection hears of it.
      await expect.poll(() => second.logs.join('\n'), { timeout: 20_000 }).toContain(`run_id: ${runId}`);
      const output = text(await second.client.callTool({ name: 'agent_output', arguments: { run_id: runId, wait: true, timeout_seconds: 20 } }));
      expect(output).toBe(`run_id: ${runId}\nagent: general\nstatus: completed\n\nSlow answer: slow job after disconnect`);
      const listing = text(await second.client.callTool({ name: 'agent_list', arguments: { status: 'all' } }));
      expect(listing).toMatch(/\| completed( \(unread\))? \| general \| slow foreground job/);
    } finally {
      await second.close();
    }
  });

  it('survives a restart of cadre mcp: a run of a stopped process is resumed and read by the next one', async () => {
    const first = await connect();
    const created = await first.client.request(
      { method: 'tools/call', params: { name: 'agent', arguments: { agent: 'general', task: 'slow task across a restart' }, task: {} } },
      CreateTaskResultSchema,
    );
    process.kill(first.pid, 'SIGKILL');
    await first.close().catch(() => {});
    const second = await connect();
    try {
      const result = await second.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
      expect(text(result)).toContain('status: completed');
      expect(text(result)).toContain('Slow answer: slow task across a restart');
    } finally {
      await second.close();
    }
  }, 40_000);

  it("asks the client's person through elicitation and runs the call once approved", async () => {
    const asked: string[] = [];
    const connection = await connect({ elicit: (message) => (asked.push(message), { decision: 'approve' }) });
    try {
      const answer = text(await connection.client.callTool({ name: 'agent', arguments: { agent: 'writer', task: 'write a file' } }));
      expect(asked[0]).toContain("agent 'writer' asks to run write_file out.txt");
      expect(answer).toContain('status: completed');
      expect(answer).toContain('Wrote out.txt.');
    } finally {
      await connection.close();
    }
  });
});

describe('cadre mcp --http', () => {
  it('serves streamable HTTP on 127.0.0.1 behind a bearer token and an Origin check, with a token generated once and stored', async () => {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const started = workspace.start(['mcp', '--http', '0', ...flags()]);
    try {
      await expect.poll(() => started.output.stdout, { timeout: 15_000 }).toMatch(/Token: \S+/);
      const url = /cadre mcp: (\S+)/.exec(started.output.stdout)![1];
      const token = /Token: (\S+)/.exec(started.output.stdout)![1];
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      expect(started.output.stdout).toContain('(generated now, stored in');
      const client = new Client({ name: 'http-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('agent');
      const answer = text(await client.callTool({ name: 'agent', arguments: { agent: 'general', task: 'over http' } }));
      expect(answer).toContain('Answer to: over http');
      await client.close();
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      };
      const post = (headers: Record<string, string>) =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          body: JSON.stringify(initialize),
        });
      expect((await post({})).status).toBe(401);
      expect((await post({ authorization: 'Bearer wrong' })).status).toBe(401);
      expect((await post({ authorization: `Bearer ${token}`, origin: 'https://evil.example' })).status).toBe(403);
      expect((await post({ authorization: `Bearer ${token}` })).status).toBe(200);
    } finally {
      started.child.kill('SIGTERM');
      await started.exited;
    }
    // The next start uses the stored token.
    const again = workspace.start(['mcp', '--http', '0', ...flags()]);
    try {
      await expect.poll(() => again.output.stdout, { timeout: 15_000 }).toMatch(/Token: \S+/);
      expect(again.output.stdout).not.toContain('generated now');
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  });
});
