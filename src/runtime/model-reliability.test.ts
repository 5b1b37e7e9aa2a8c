import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../agents/agent-definition.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { defineTool } from '../tools/define-tool.ts';
import { scriptedLanguageModel, startScriptedServer, type ScriptedRequest, type ScriptedServer, type ScriptedTurn, type Script } from '../testing/index.ts';
import { createCadre, type Cadre, type CadreOptions } from './create-cadre.ts';

const open: Cadre[] = [];
const servers: ScriptedServer[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
  for (const server of servers.splice(0)) await server.close();
});

const key = 'qz-Unusual-Key-Shape-4242-abcdefgh';
type Streaming = 'always' | 'never';
const streamings: Streaming[] = ['always', 'never'];

function makeCadre(options: Partial<CadreOptions> & Pick<CadreOptions, 'model'>) {
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    retryDelayMs: 1,
    onError: (error) => {
      throw error;
    },
    ...options,
  });
  open.push(cadre);
  return cadre;
}

/** The primary delegates one task to `general`, then answers with what it got. */
function delegating(subagent: ScriptedTurn): Script {
  return [
    { when: { system_includes: 'general-purpose' }, turns: [subagent] },
    {
      turns: [
        { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'Look it up', description: 'look up' } }] },
        { text: 'The subagent could not help, so I answer myself.' },
      ],
    },
  ];
}

describe('model timeouts and retries in the runtime', () => {
  it.each(streamings)('fails a run whose provider never answers with model_error, and the parent gets its answer (streaming %s)', async (streaming) => {
    const model = scriptedLanguageModel(delegating({ fault: { type: 'hang' } }));
    const cadre = makeCadre({ model, streaming, limits: { modelTimeoutMs: 80, maxRetries: 1 } });
    const session = await cadre.createSession();
    const turn = await cadre.send(session.id, 'Please look it up.');
    expect(turn).toMatchObject({ status: 'completed', text: 'The subagent could not help, so I answer myself.' });
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(run).toMatchObject({ status: 'failed', error: { kind: 'model_error', message: 'The model provider did not answer within 0.08 s (2 attempts).' } });
    const toolMessage = (await cadre.store.listMessages(session.id)).find((message) => message.role === 'tool');
    expect(JSON.stringify(toolMessage?.content)).toContain('error: model_error: The model provider did not answer within 0.08 s (2 attempts).');
  });

  it.each(streamings)("fails the primary agent's turn when its own call never gets an answer (streaming %s)", async (streaming) => {
    const cadre = makeCadre({
      model: scriptedLanguageModel([{ turns: [{ fault: { type: 'hang' } }] }]),
      streaming,
      limits: { modelTimeoutMs: 60, maxRetries: 0 },
    });
    const session = await cadre.createSession();
    const turn = await cadre.send(session.id, 'Hello?');
    expect(turn).toMatchObject({ status: 'failed', error: 'The model provider did not answer within 0.06 s (1 attempt).' });
  });

  it.each(streamings)('retries a connection reset before output over HTTP the same way (streaming %s)', async (streaming) => {
    let requests = 0;
    const server = await startScriptedServer({
      script: () =>
        ++requests <= 2 ? { text: 'lost', fault: { type: 'reset', after_chars: requests === 1 ? undefined : 0 } } : { text: 'Answered on the third try.' },
    });
    servers.push(server);
    const cadre = makeCadre({ model: 'openai-compatible:scripted', baseURL: server.baseURL, env: {}, streaming });
    const session = await cadre.createSession();
    const turn = await cadre.send(session.id, 'Hello?');
    expect(turn).toMatchObject({ status: 'completed', text: 'Answered on the third try.' });
    expect(server.requests).toHaveLength(3);
  });

  it('keeps what a stream produced before the connection dropped as the partial result, without a blind retry', async () => {
    const server = await startScriptedServer({
      script: delegating({ text: 'Partial answer, then the line drops.', chunk_size: 4, fault: { type: 'reset', after_chars: 8 } }),
    });
    servers.push(server);
    const cadre = makeCadre({ model: 'openai-compatible:scripted', baseURL: server.baseURL, env: {}, streaming: 'always' });
    const session = await cadre.createSession();
    const turn = await cadre.send(session.id, 'Please look it up.');
    expect(turn.status).toBe('completed');
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(run).toMatchObject({ status: 'failed', partial_result: 'Partial ', error: { kind: 'model_error' } });
    expect(run.error?.message).toMatch(/^The model provider's answer broke off \(.+\); the 8 characters it sent are kept as the partial result\.$/);
    expect(server.requests.filter((request) => request.system.includes('general-purpose'))).toHaveLength(1);
  });

  it('makes runs that meet a 429 from one provider wait together, counted at the server', async () => {
    // A provider that refuses every request for 500 ms after it first refused one.
    let blockedUntil: number | undefined;
    let subagentRequests = 0;
    const server = await startScriptedServer({
      script: (request): ScriptedTurn => {
        const lastUser = request.messages.findLast((message) => message.role === 'user')?.content ?? '';
        if (request.system.includes('general-purpose')) {
          subagentRequests++;
          const now = Date.now();
          blockedUntil ??= now + 500;
          if (now < blockedUntil) return { error: { status: 429, message: 'Rate limited.', retry_after_ms: blockedUntil - now } };
          return { text: `Done: ${request.messages[0].content}` };
        }
        if (lastUser.includes('<subagent-notification>')) return { text: 'Noted.' };
        const start = (task: string) => ({ name: 'agent', arguments: { agent: 'general', task, run_in_background: true } });
        if (request.turn === 0) return { tool_calls: [start('first')] };
        // Later, once the first run met the 429: three more runs to the same provider.
        if (request.turn === 1) return { delay_ms: 150, tool_calls: [start('second'), start('third'), start('fourth')] };
        return { text: 'Four runs started.' };
      },
    });
    servers.push(server);
    const cadre = makeCadre({ model: 'openai-compatible:scripted', baseURL: server.baseURL, env: {}, streaming: 'never' });
    const session = await cadre.createSession();
    await cadre.send(session.id, 'Start four runs.');
    await cadre.waitForIdle(session.id);
    const runs = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(runs.map((run) => run.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    // One refused request, then one each: the three later runs waited for the gate instead of knocking.
    expect(subagentRequests).toBe(5);
  });

  it('fails a run at once, saying when to retry, when the provider asks for more than 60 s', async () => {
    let subagentRequests = 0;
    const model = scriptedLanguageModel((request) => {
      if (!request.system.includes('general-purpose'))
        return request.turn === 0 ? { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'x' } }] } : { text: 'Told.' };
      subagentRequests++;
      return { error: { status: 429, message: 'Quota exhausted.', retry_after: 120 } };
    });
    const cadre = makeCadre({ model });
    const session = await cadre.createSession();
    expect(await cadre.send(session.id, 'Go.')).toMatchObject({ status: 'completed', text: 'Told.' });
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(run.error?.kind).toBe('model_error');
    expect(run.error?.message).toMatch(
      /^The model provider asks to retry after 120 s \(at \S+\), longer than cadre waits \(60 s\): retry after \d{4}-\d\d-\d\dT[\d:.]+Z\.$/,
    );
    expect(subagentRequests).toBe(1);
  });

  it('takes the retry count from limits.maxRetries, and from the maxRetries option when the limit is not set', async () => {
    const hang = () => scriptedLanguageModel([{ turns: [{ fault: { type: 'reset' } }] }]);
    const fromLimit = makeCadre({ model: hang(), maxRetries: 5, limits: { maxRetries: 0 } });
    const fromOption = makeCadre({ model: hang(), maxRetries: 1 });
    expect(fromLimit.limits.maxRetries).toBe(0);
    expect(fromOption.limits.maxRetries).toBe(1);
    const session = await fromOption.createSession();
    expect(await fromOption.send(session.id, 'x')).toMatchObject({
      status: 'failed',
      error: 'The connection to the model provider failed (2 attempts): terminated (ECONNRESET)',
    });
  });
});

describe('secrets in the runtime', () => {
  it('redacts keys from tool results before the model or the store sees them, and from logged errors', async () => {
    const requests: ScriptedRequest[] = [];
    const model = scriptedLanguageModel((request) => {
      requests.push(request);
      return request.turn === 0 ? { tool_calls: [{ name: 'printenv', arguments: {} }] } : { text: 'Printed.' };
    });
    const printenv = defineTool({
      name: 'printenv',
      description: 'Prints the environment.',
      risk: 'read',
      inputSchema: z.object({}),
      execute: async () => `CADRE_API_KEY=${key}\nHOME=/home/me\nraw ${key}`,
    });
    const logged: unknown[] = [];
    const custom = makeCadre({
      model,
      env: { CADRE_API_KEY: key },
      tools: { printenv },
      agents: [defineAgent({ name: 'shell', description: 'Has a shell.', system: 'You use the shell.', mode: 'primary', tools: ['printenv'] })],
      onError: (error) => logged.push(error),
    });
    // A listener that fails with the key in its message: the error is logged, redacted.
    custom.subscribe(() => {
      throw new Error(`listener saw ${key}`);
    });
    const shellSession = await custom.createSession({ agent: 'shell' });
    const turn = await custom.send(shellSession.id, 'Print the environment.');
    expect(turn.status).toBe('completed');
    const toolMessage = requests[1].messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toContain('[redacted]');
    expect(toolMessage?.content).toContain('HOME=/home/me');
    expect(JSON.stringify(requests)).not.toContain(key);
    expect(JSON.stringify(await custom.store.listMessages(shellSession.id))).not.toContain(key);
    expect(logged.length).toBeGreaterThan(0);
    expect((logged[0] as Error).message).toBe('listener saw [redacted]');
    expect(custom.redactor.redact(`oops ${key}`)).toBe('oops [redacted]');
  });
});
