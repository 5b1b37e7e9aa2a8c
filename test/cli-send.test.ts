import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEventRecord, RunRecord } from '../src/store/records.ts';
import type { ScriptedRequest, ScriptedTurn } from '../src/testing/index.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';
import { scriptedWires, wireModelFlags, wireModels } from './helpers/wires.ts';

const personMessage = (text: string) => `(from a person) ${text}`;
const isScout = (request: ScriptedRequest) => request.system.includes('You are the scout');
const personTexts = (request: ScriptedRequest) =>
  request.messages.filter((message) => message.role === 'user' && message.content.startsWith('(from a person) ')).map((message) => message.content);

/**
 * The primary starts one background scout run and answers its notification; the scout works in
 * slow steps (a list_files call every 100 ms, or, for a task that says so, a model call that never
 * answers) until a person's message reaches it, then reports what it read.
 */
function respond(request: ScriptedRequest): ScriptedTurn {
  if (isScout(request)) {
    const [heard] = personTexts(request);
    if (heard) return { text: `Redirected by: ${heard}` };
    if (request.messages[0]?.content.includes('hang')) return { fault: { type: 'hang' } };
    return { tool_calls: [{ name: 'list_files', arguments: { path: '.' } }], delay_ms: 100 };
  }
  const last = request.messages.at(-1);
  if (last?.role === 'user' && last.content.includes('<subagent-notification>')) return { text: 'Noted the notification.' };
  if (request.turn === 0) {
    const task = request.messages.at(-1)!.content.includes('hang') ? 'Look around and hang' : 'Look around slowly';
    return { tool_calls: [{ name: 'agent', arguments: { agent: 'scout', task, run_in_background: true, max_turns: 400 } }] };
  }
  return { text: 'Started it in the background.' };
}

let workspace: Workspace;
beforeAll(async () => {
  // With workers (scripts/test-e2e-workers.ts), they carry out the runs of sessions on every wire: they get the keys too.
  workspace = await createWorkspace({ script: respond, workerEnv: { ...wireModels.messages.env, ...wireModels.responses.env } });
});
afterAll(() => workspace.close());

async function shown(runId: string): Promise<{ run: RunRecord; events: RunEventRecord[] }> {
  return workspace.json<{ run: RunRecord; events: RunEventRecord[] }>(['show', runId]);
}

describe.each(scriptedWires)('cadre send from a second process, on the %s wire', (wire) => {
  it('redirects a background run of cadre run: the message reaches the model once, before its next call', async () => {
    const { flags, env } = wireModelFlags(wire, workspace.server.baseURL);
    const before = workspace.server.requests.length;
    const first = workspace.start(['run', ...flags, '--db', workspace.database, 'steer me'], { env });
    const [, runId] = await first.waitForStderr(/\[(run_\w+) scout\] started/, 30_000);
    const sent = await workspace.run(['send', runId, 'Stop listing; report now.', '--db', workspace.database]);
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain(`${runId}  scout  running  message stored; it reaches the subagent before its next model call`);
    const result = await first.exited;
    expect(result.stderr).not.toContain('failed');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Started it in the background.\nNoted the notification.\n');
    // The first process shows the message where it reached the run (with workers, a worker delivers it).
    if (workspace.workers.length === 0) expect(result.stderr).toContain(`[${runId} scout] got a message from a person: Stop listing; report now.`);
    const { run, events } = await shown(runId);
    expect(run.status).toBe('completed');
    expect(run.result?.text).toBe(`Redirected by: ${personMessage('Stop listing; report now.')}`);
    // Stored, then delivered within 2 s by the process that runs it.
    const storedAt = events.find((event) => event.type === 'message-in')!.at;
    const deliveredAt = events.find((event) => event.type === 'message-deliver')!.at;
    expect(Date.parse(deliveredAt) - Date.parse(storedAt)).toBeLessThan(2_000);
    // The scripted server got it, once, in the scout's last request only.
    const scoutRequests = workspace.server.requests
      .slice(before)
      .filter((request) => isScout(request) && request.messages[0]?.content === 'Look around slowly');
    const heard = scoutRequests.filter((request) => personTexts(request).length > 0);
    expect(heard).toHaveLength(1);
    expect(personTexts(heard[0])).toEqual([personMessage('Stop listing; report now.')]);
    expect(heard[0].messages.at(-1)).toMatchObject({ role: 'user', content: personMessage('Stop listing; report now.') });
    if (workspace.workers.length === 0) expect(heard[0].wire).toBe(wire);
  });
});

describe('cadre send', () => {
  it('--interrupt aborts a model call that never answers; the run keeps its id and goes on with the message', async () => {
    const first = workspace.start(['run', ...workspace.modelFlags, 'steer me, hang']);
    const [, runId] = await first.waitForStderr(/\[(run_\w+) scout\] started/, 30_000);
    // The scout's first model call is under way (and never answers) once the server has it.
    await expect
      .poll(() => workspace.server.requests.some((request) => isScout(request) && request.messages[0]?.content === 'Look around and hang'), { timeout: 20_000 })
      .toBe(true);
    const sent = await workspace.run(['send', runId.slice(-6), 'Forget it; answer now.', '--interrupt', '--db', workspace.database]);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain('its work under way is interrupted and it goes on with the message');
    expect((await first.exited).code).toBe(0);
    const { run, events } = await shown(runId);
    expect(run).toMatchObject({ id: runId, status: 'completed', result: { text: `Redirected by: ${personMessage('Forget it; answer now.')}` } });
    expect(events.filter((event) => event.type === 'run-end')).toHaveLength(1);
    expect(events.find((event) => event.type === 'message-in')?.data).toMatchObject({ from: 'person', interrupt: true });
  });

  it('answers an empty message and an unknown run with exit 2, changing nothing', async () => {
    const empty = await workspace.run(['send', 'run_unknown', '  ', '--db', workspace.database]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('message: must not be empty');
    const unknown = await workspace.run(['send', 'run_unknown', 'hello', '--db', workspace.database]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim()).toBe("cadre: No run 'run_unknown'. List them with: cadre runs");
  });
});
