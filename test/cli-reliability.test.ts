import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../src/store/records.ts';
import type { Script, ScriptedServer } from '../src/testing/index.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

// A key of a shape no pattern knows: only redaction of the configured value can hide it.
const key = 'qz-Unusual-Key-Shape-4242-abcdefgh';

let workspace: Workspace;
let server: ScriptedServer;

const script: Script = [
  // Provider faults for the primary agent.
  { when: { user_includes: 'primary hangs' }, turns: [{ fault: { type: 'hang' } }] },
  {
    when: { user_includes: 'subagent hangs' },
    turns: [
      { tool_calls: [{ name: 'agent', arguments: { agent: 'scout', task: 'hang please' } }] },
      { text: 'The scout never answered; here is my own answer.' },
    ],
  },
  { when: { system_includes: 'You are the scout', user_includes: 'hang please' }, turns: [{ fault: { type: 'hang', after_chars: 0 } }] },
  // A provider that echoes the credential it was sent, and a model that repeats the key.
  {
    when: { system_includes: 'You are the scout', user_includes: 'fail' },
    turns: [{ error: { status: 401, message: 'Incorrect API key provided: {{authorization}}' } }],
  },
  { when: { system_includes: 'You are the scout', user_includes: 'echo' }, turns: [{ text: `I found the key ${key} in the environment.` }] },
  {
    when: { user_includes: 'leak' },
    turns: [
      {
        tool_calls: [
          { name: 'agent', arguments: { agent: 'scout', task: 'fail on purpose', description: 'fails' } },
          { name: 'agent', arguments: { agent: 'scout', task: `echo the key ${key}`, description: 'echoes' } },
        ],
      },
      { text: 'Both subagents are done.' },
    ],
  },
];

beforeAll(async () => {
  // Written before the workers start (in the workers pass), so they time out and retry as the host does.
  // The workers (in the workers pass) hold the key the secrets test gives its host.
  workspace = await createWorkspace({ script, config: { limits: { modelTimeoutMs: 300, maxRetries: 1 } }, workerEnv: { CADRE_API_KEY: key } });
  // The workspace's own server: its workers (in the workers pass) call the same script.
  server = workspace.server;
});
afterAll(async () => {
  await workspace.close();
});

const flags = () => ['--model', 'openai-compatible:scripted', '--base-url', server.baseURL, '--db', workspace.database];

describe('cadre run with a provider that never answers', () => {
  it("returns exit 1 with a clear line when the primary agent's own call hangs", async () => {
    const started = Date.now();
    const result = await workspace.run(['run', ...flags(), 'primary hangs']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^cadre: the primary agent failed: The model provider did not answer within 0\.3 s \(2 attempts\)\.$/m);
    expect(result.stdout).toBe('');
    // Two 0.3 s attempts and one 2 s backoff, not forever.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('fails a subagent run whose stream never sends a chunk with model_error, and the parent answers', async () => {
    const result = await workspace.run(['run', ...flags(), 'subagent hangs']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('The scout never answered; here is my own answer.\n');
    const sessionId = result.stderr.match(/Session (ses_\w+)/)![1];
    const [run] = await workspace.json<RunRecord[]>(['runs', sessionId]);
    expect(run).toMatchObject({ status: 'failed', error: { kind: 'model_error', message: 'The model provider did not answer within 0.3 s (2 attempts).' } });
  });
});

describe('secrets', () => {
  it('keeps a configured key out of everything cadre stores, prints, serves and exports, and out of what the parent model sees', async () => {
    const env = { CADRE_API_KEY: key };
    const result = await workspace.run(['run', ...flags(), 'leak the key'], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Both subagents are done.\n');
    const output = result.stdout + result.stderr;
    expect(output).not.toContain(key);
    const sessionId = result.stderr.match(/Session (ses_\w+)/)![1];

    // The database file (and its write-ahead log) never held the key.
    const directory = join(workspace.cwd, '.cadre');
    for (const name of await readdir(directory)) {
      if (!name.startsWith('test.db')) continue;
      expect((await readFile(join(directory, name))).includes(key), name).toBe(false);
    }

    const runs = await workspace.json<RunRecord[]>(['runs', sessionId]);
    const failed = runs.find((run) => run.description === 'fails')!;
    const echoed = runs.find((run) => run.description === 'echoes')!;
    expect(failed).toMatchObject({ status: 'failed', error: { kind: 'model_error', message: 'Incorrect API key provided: Bearer [redacted]' } });
    expect(echoed).toMatchObject({ status: 'completed', task: 'echo the key [redacted]', result: { text: 'I found the key [redacted] in the environment.' } });

    const surfaces: string[] = [JSON.stringify(runs)];
    for (const run of runs) surfaces.push((await workspace.run(['show', run.id, '--json', '--db', workspace.database], { env })).stdout);
    for (const run of runs) surfaces.push((await workspace.run(['show', run.id, '--db', workspace.database], { env })).stdout);
    surfaces.push((await workspace.run(['runs', sessionId, '--db', workspace.database], { env })).stdout);
    for (const format of ['json', 'markdown']) {
      const exported = await workspace.run(['export', sessionId, '--format', format, '--db', workspace.database], { env });
      expect(exported.code).toBe(0);
      surfaces.push(exported.stdout);
    }
    for (const surface of surfaces) expect(surface).not.toContain(key);
    expect(surfaces.join('\n')).toContain('[redacted]');

    // The HTTP API.
    const serve = workspace.start(['serve', '--port', '0', '--db', workspace.database], { env });
    try {
      await serve.waitForStderr(/Press Ctrl-C/);
      const url = serve.output.stdout.match(/cadre dashboard: (http:\S+)/)![1].replace(/\/$/, '');
      const paths = [
        `/api/sessions/${sessionId}`,
        `/api/sessions/${sessionId}/runs`,
        `/api/sessions/${sessionId}/export?format=json`,
        `/api/sessions/${sessionId}/export?format=markdown`,
      ];
      for (const run of runs) paths.push(`/api/runs/${run.id}`, `/api/runs/${run.id}/transcript`);
      for (const path of paths) {
        const response = await fetch(url + path);
        expect(response.status, path).toBe(200);
        expect(await response.text(), path).not.toContain(key);
      }
    } finally {
      serve.child.kill('SIGINT');
      await serve.exited;
    }

    // What the parent model was sent back as the agent tools' results.
    const parentFollowUp = server.requests.find((request) => request.messages[0]?.content === 'leak the key' && request.turn === 1)!;
    const toolResults = parentFollowUp.messages.filter((message) => message.role === 'tool').map((message) => message.content);
    expect(toolResults).toHaveLength(2);
    expect(toolResults.join('\n')).toContain('error: model_error: Incorrect API key provided: Bearer [redacted]');
    expect(JSON.stringify(parentFollowUp)).not.toContain(key);
  });
});
