// Runs carried out by the real Claude Code against the scripted server, under cadre's lifecycle
// (CONTRACT section 21, docs/harnesses.md). The program is not a dependency of cadre: install it
// elsewhere and point CADRE_TEST_CLAUDE at its executable (.ci/run does). The tests of a missing,
// crashing or babbling program use small scripts in its place and always run.
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../src/store/records.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { ScriptedRequest, ScriptedTurn } from '../src/testing/index.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';
import { opencodeConfig, writeCodexConfig } from './helpers/harness-programs.ts';

const claude = process.env.CADRE_TEST_CLAUDE;
if (claude === undefined) console.warn('harness-runs: skipping the runs of the real Claude Code: set CADRE_TEST_CLAUDE to its executable (.ci/run does)');
const opencode = process.env.CADRE_TEST_OPENCODE;
if (opencode === undefined) console.warn('harness-runs: skipping the runs of the real opencode: set CADRE_TEST_OPENCODE to its executable (.ci/run does)');
const codex = process.env.CADRE_TEST_CODEX;
if (codex === undefined) console.warn('harness-runs: skipping the runs of the real Codex: set CADRE_TEST_CODEX to its executable (.ci/run does)');

const coderAgent = `---
description: Writes and runs code with Claude Code.
harness: claude-code
max_turns: 6
mode: subagent
---
You are the coder. Be brief.
`;

const codexAgent = `---
description: Answers with Codex.
harness: codex
mode: subagent
---
You are the Codex agent. Be brief.
`;

const opencodeAgent = `---
description: Answers with opencode.
harness: opencode
mode: subagent
---
You are the opencode agent. Be brief.
`;

let workspace: Workspace;
/** Codex's home: outside the temporary folder, where Codex refuses to make its sandbox's helpers. */
let codexHome: string;
/** Folders of programs standing in for claude: put first on the PATH of a run. */
let fakes: string;
/** A folder holding only a link to the real claude (and node, for the shell it runs). */
let realBin: string;
const answer = 'The notes say to remember the milk.';

/** The scripted model: cadre's primary agent on Chat Completions, Claude Code on Messages. */
function respond(request: ScriptedRequest): ScriptedTurn {
  const first = request.messages.find((message) => message.role === 'user')?.content ?? '';
  if (request.tools.includes('agent')) {
    const task = first.includes('harness read')
      ? { agent: 'coder', task: 'What do my notes say?' }
      : first.includes('harness slow')
        ? { agent: 'coder', task: 'Start the slow job.', run_in_background: true }
        : first.includes('harness ask')
          ? { agent: 'coder', task: 'Write the date to stamp.txt.' }
          : first.includes('harness chat')
            ? { agent: 'coder', task: 'Wait for the go.', run_in_background: true }
            : first.includes('opencode chat')
              ? { agent: 'opener', task: 'Wait for the opencode go.', run_in_background: true }
              : first.includes('codex chat')
                ? { agent: 'codexer', task: 'Wait for the codex go.', run_in_background: true }
                : first.includes('harness nap')
                  ? { agent: 'coder', task: 'Take a nap, then answer.', run_in_background: true }
                  : first.includes('codex read')
                    ? { agent: 'codexer', task: 'Count the notes.' }
                    : first.includes('harness shaped')
                      ? {
                          agent: 'coder',
                          task: 'Count the notes as JSON.',
                          output_schema: { type: 'object', properties: { count: { type: 'number' } }, required: ['count'] },
                        }
                      : first.includes('opencode read')
                        ? { agent: 'opener', task: 'List the notes.' }
                        : { agent: 'coder', task: 'Just answer.' };
    const last = request.messages.findLast((message) => message.role === 'user')?.content;
    // A notification of the run's end comes as a later user message: it is only noted.
    return request.turn === 0 && last === first ? { tool_calls: [{ name: 'agent', arguments: task }] } : { text: 'Done.' };
  }
  if (
    request.tools.includes('exec_command') &&
    request.messages.some((message) => message.role === 'user' && message.content.includes('Wait for the codex go.'))
  ) {
    if (request.messages.some((message) => message.role === 'user' && message.content.includes('Say the word'))) return { text: 'The word is milk.' };
    return request.turn === 0
      ? { text: 'Waiting.', tool_calls: [{ name: 'exec_command', arguments: { cmd: 'while [ ! -e go2.txt ]; do sleep 0.1; done; echo gone 3131' } }] }
      : { text: 'Went.' };
  }
  if (request.tools.includes('bash') && request.messages.some((message) => message.role === 'user' && message.content.includes('Wait for the opencode go.'))) {
    if (request.messages.some((message) => message.role === 'user' && message.content.includes('Say the word'))) return { text: 'The word is milk.' };
    return request.turn === 0
      ? {
          text: 'Waiting.',
          tool_calls: [{ name: 'bash', arguments: { command: 'while [ ! -e go3.txt ]; do sleep 0.1; done; echo gone 3132', description: 'wait' } }],
        }
      : { text: 'Went.' };
  }
  // Codex's first user message is its environment context: the task comes after it.
  if (request.tools.includes('exec_command') && request.messages.some((message) => message.role === 'user' && message.content.includes('Count the notes.'))) {
    return request.turn === 0
      ? { text: 'Counting.', tool_calls: [{ name: 'exec_command', arguments: { cmd: 'cat notes.txt; echo counted > counted.txt' } }] }
      : { text: 'There is one note: remember the milk.', usage: { input_tokens: 120, output_tokens: 11, cache_read_input_tokens: 40 } };
  }
  if (request.tools.includes('bash') && request.messages.some((message) => message.role === 'user' && message.content.includes('List the notes.'))) {
    return request.turn === 0
      ? { text: 'Listing.', tool_calls: [{ name: 'bash', arguments: { command: 'cat notes.txt', description: 'list' } }] }
      : { text: 'One note: the milk.', usage: { input_tokens: 90, output_tokens: 5 } };
  }
  if (!request.tools.includes('Bash')) return { text: 'A title' };
  if (first.includes('What do my notes say?')) {
    return request.turn === 0
      ? { text: 'Reading them.', tool_calls: [{ name: 'Read', arguments: { file_path: join(workspace.cwd, 'notes.txt') } }] }
      : { text: answer, usage: { input_tokens: 100, output_tokens: 9, cache_read_input_tokens: 60 } };
  }
  if (first.includes('Wait for the go.')) {
    // A message sent while it waited comes as a user message, however Claude Code puts it in.
    if (request.messages.some((message) => message.role === 'user' && message.content.includes('Say the word'))) return { text: 'The word is milk.' };
    return request.turn === 0
      ? {
          text: 'Waiting.',
          tool_calls: [{ name: 'Bash', arguments: { command: 'while [ ! -e go.txt ]; do sleep 0.1; done; echo gone 3130', description: 'wait' } }],
        }
      : { text: 'Went.' };
  }
  if (first.includes('Take a nap, then answer.')) {
    const last = request.messages.findLast((message) => message.role === 'user')?.content ?? '';
    if (last.includes("cadre's process restarted")) return { text: 'Rested after the restart.' };
    return { text: 'Napping.', tool_calls: [{ name: 'Bash', arguments: { command: 'echo napping; sleep 3129', description: 'nap' } }] };
  }
  if (first.includes('Start the slow job.')) {
    return request.turn === 0
      ? {
          text: 'Starting it.',
          tool_calls: [{ name: 'Bash', arguments: { command: '(setsid sleep 3127 >/dev/null 2>&1 &); sleep 3128', description: 'slow job' } }],
        }
      : { text: 'It finished.' };
  }
  if (first.includes('Write the date to stamp.txt.')) {
    return request.turn === 0
      ? { text: 'Writing.', tool_calls: [{ name: 'Bash', arguments: { command: 'echo stamped > stamp.txt', description: 'stamp' } }] }
      : { text: 'Stamped.' };
  }
  return { text: 'Nothing to do.' };
}

beforeAll(async () => {
  workspace = await createWorkspace({ script: respond });
  await writeFile(join(workspace.cwd, '.cadre', 'agents', 'coder.md'), coderAgent);
  await writeFile(join(workspace.cwd, '.cadre', 'agents', 'codexer.md'), codexAgent);
  await writeFile(join(workspace.cwd, '.cadre', 'agents', 'opener.md'), opencodeAgent);
  // opencode's provider: its built-in Anthropic one, pointed at the scripted server's Messages wire.
  await writeFile(join(workspace.cwd, '.opencode-test.json'), JSON.stringify(opencodeConfig(workspace.server.baseURL)));
  await mkdir(join(homedir(), '.cache'), { recursive: true });
  codexHome = await mkdtemp(join(homedir(), '.cache', 'cadre-test-codex-'));
  await writeCodexConfig(codexHome, workspace.server.baseURL);
  fakes = join(workspace.cwd, '.fakes');
  realBin = join(workspace.cwd, '.real-bin');
  await mkdir(fakes);
  await mkdir(realBin);
  if (claude !== undefined) await symlink(claude, join(realBin, 'claude'));
  if (codex !== undefined) await symlink(codex, join(realBin, 'codex'));
  if (opencode !== undefined) await symlink(opencode, join(realBin, 'opencode'));
});
afterAll(async () => {
  await workspace.close();
  await rm(codexHome, { recursive: true, force: true });
});

/** The environment a run of the real claude gets, besides the workspace's. */
function claudeEnv(): Record<string, string> {
  return {
    PATH: `${realBin}:${process.env.PATH ?? ''}`,
    ANTHROPIC_BASE_URL: workspace.server.url,
    ANTHROPIC_API_KEY: 'test-anthropic-key',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

/** The environment a run of the real codex gets: its home with the scripted provider. */
function codexEnv(): Record<string, string> {
  return { PATH: `${realBin}:${process.env.PATH ?? ''}`, CODEX_HOME: codexHome, SCRIPTED_API_KEY: 'test-key' };
}

/** The environment a run of the real opencode gets: its configuration, no fetches of its own. */
function opencodeEnv(): Record<string, string> {
  return {
    PATH: `${realBin}:${process.env.PATH ?? ''}`,
    OPENCODE_CONFIG: join(workspace.cwd, '.opencode-test.json'),
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_SHARE: '1',
  };
}

/**
 * A message sent with `cadre send` from another process while a program that takes no input
 * while it works (Codex, opencode) is in its first invocation: the scripted model keeps that
 * invocation in a `sleep` (`sleeper`) until the test writes `go`; the message must then reach the
 * program by resuming its session, and the run end with the answer to it.
 */
async function messageAtInvocationEnd(options: { env: Record<string, string>; prompt: string; agent: string; sleeper: string; go: string }): Promise<void> {
  const first = workspace.start(['run', ...workspace.modelFlags, '--yes', options.prompt], { env: options.env });
  const [, runId] = await first.waitForStderr(new RegExp(`\\[(run_\\w+) ${options.agent}\\] started`), 30_000);
  await waitUntil(() => sleepers(options.sleeper).length >= 1, 60_000).catch((error: Error) => {
    throw new Error(`${error.message}: ${first.output.stderr}`);
  });
  const sent = await workspace.run(['send', runId, 'Say the word.', '--db', workspace.database]);
  expect(sent.code, sent.stderr).toBe(0);
  await waitUntil(async () => (await runById(runId)).messages?.length === 1, 10_000);
  await writeFile(join(workspace.cwd, options.go), 'go\n');
  const result = await first.exited;
  expect(result.code, result.stderr).toBe(0);
  const run = await runById(runId);
  expect(run, JSON.stringify(run.error)).toMatchObject({ id: runId, status: 'completed', result: { text: 'The word is milk.' } });
  expect(run.messages).toMatchObject([{ text: 'Say the word.', delivered_to: 'transcript' }]);
}

async function runById(runId: string): Promise<RunRecord> {
  return (await workspace.json<{ run: RunRecord }>(['show', runId])).run;
}

/** A stand-in `claude` whose body is `script` (sh). */
async function fakeClaude(name: string, script: string): Promise<string> {
  const folder = join(fakes, name);
  await mkdir(folder);
  await writeFile(join(folder, 'claude'), `#!/bin/sh\n${script}\n`);
  await chmod(join(folder, 'claude'), 0o755);
  return folder;
}

function sleepers(pattern = 'sleep 312[78]'): string[] {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

describe('a harness run of the real Claude Code', () => {
  it.skipIf(claude === undefined)(
    claude === undefined
      ? 'skipped: set CADRE_TEST_CLAUDE to run it'
      : 'completes with its tool use and text in the transcript, its session, usage and cost recorded',
    async () => {
      const result = await workspace.run(['run', ...workspace.modelFlags, '--json', 'harness read'], { env: claudeEnv() });
      expect(result.code, result.stderr).toBe(0);
      const runId = /"run_id":"(run_\w+)"/.exec(result.stdout)?.[1] ?? /(run_\w+)/.exec(result.stdout)?.[1];
      expect(runId).toBeDefined();
      const run = await runById(runId!);
      expect(run).toMatchObject({ status: 'completed', agent: 'coder', result: { text: answer }, harness: { name: 'claude-code', pid: null } });
      expect(run.harness?.session_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(run.harness?.host).toBeTruthy();
      expect(run.turns).toBe(2);
      expect(run.usage.input_tokens).toBeGreaterThan(0);
      expect(run.usage.cost_usd).toBeGreaterThan(0);

      const store = createSqliteStore({ path: workspace.database });
      try {
        const messages = await store.listMessages(run.child_session_id);
        const parts = messages.flatMap((message) => (Array.isArray(message.content) ? (message.content as Array<Record<string, any>>) : []));
        expect(parts).toContainEqual(expect.objectContaining({ type: 'tool-call', toolName: 'Read' }));
        expect(parts).toContainEqual(
          expect.objectContaining({
            type: 'tool-result',
            toolName: 'Read',
            output: expect.objectContaining({ value: expect.stringContaining('Remember the milk.') }),
          }),
        );
        expect(parts).toContainEqual({ type: 'text', text: answer });
        const events = await store.listRunEvents(run.id);
        expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['run-start', 'step-start', 'tool-call-start', 'tool-call-end', 'run-end']));
      } finally {
        await store.close();
      }
    },
    120_000,
  );

  it.skipIf(claude === undefined)(
    claude === undefined
      ? 'skipped: set CADRE_TEST_CLAUDE to run it'
      : 'is stopped from a second process: the program and the detached shell it started end within 2 s, its partial result kept',
    async () => {
      const first = workspace.start(['run', ...workspace.modelFlags, '--yes', 'harness slow'], { env: claudeEnv() });
      const [, runId] = await first.waitForStderr(/\[(run_\w+) coder\] started/, 30_000);
      // The slow job runs: both sleeps, one in a session of its own.
      await waitUntil(() => sleepers().length >= 2, 60_000).catch((error: Error) => {
        throw new Error(`${error.message}: ${first.output.stderr}`);
      });
      const stop = await workspace.run(['stop', runId, '--db', workspace.database]);
      expect(stop.code, stop.stderr).toBe(0);
      const stopped = await runById(runId);
      expect(stopped.status).toBe('canceled_by_user');
      expect(Date.parse(stopped.ended_at!) - Date.parse(stopped.stop_requested_at!)).toBeLessThan(2_000);
      expect(stopped.partial_result).toBe('Starting it.');
      expect(stopped.harness).toMatchObject({ name: 'claude-code', pid: null });
      await waitUntil(() => sleepers().length === 0, 2_000);
      expect((await first.exited).code).toBe(0);
    },
    120_000,
  );

  it.skipIf(claude === undefined)(
    claude === undefined ? 'skipped: set CADRE_TEST_CLAUDE to run it' : "answers the program's ask for Bash with cadre approve from another process",
    async () => {
      const first = workspace.start(['run', ...workspace.modelFlags, '--approvals', 'wait', 'harness ask'], { env: claudeEnv() });
      const [, approvalId] = await first.waitForStderr(/\[(apr_\w+)\] coder \(run_\w+\) asks to run: bash/, 60_000);
      const approve = await workspace.run(['approve', approvalId, '--db', workspace.database]);
      expect(approve.code, approve.stderr).toBe(0);
      const result = await first.exited;
      expect(result.code, result.stderr).toBe(0);
      expect(execFileSync('cat', [join(workspace.cwd, 'stamp.txt')], { encoding: 'utf8' })).toBe('stamped\n');
    },
    120_000,
  );
});

describe('a message to a harness run of the real Claude Code', () => {
  it.skipIf(claude === undefined)(
    claude === undefined
      ? 'skipped: set CADRE_TEST_CLAUDE to run it'
      : 'reaches it as its turn ends, on its stream-json input, and the run ends with its answer to the message',
    async () => {
      const first = workspace.start(['run', ...workspace.modelFlags, '--yes', 'harness chat'], { env: claudeEnv() });
      const [, runId] = await first.waitForStderr(/\[(run_\w+) coder\] started/, 30_000);
      // Its Bash command waits for go.txt: the program is at work.
      await waitUntil(() => sleepers('gone 3130').length >= 1, 60_000).catch((error: Error) => {
        throw new Error(`${error.message}: ${first.output.stderr}`);
      });
      const sent = await workspace.run(['send', runId, 'Say the word.', '--db', workspace.database]);
      expect(sent.code, sent.stderr).toBe(0);
      await waitUntil(async () => (await runById(runId)).messages?.length === 1, 10_000);
      await writeFile(join(workspace.cwd, 'go.txt'), 'go\n');
      const result = await first.exited;
      expect(result.code, result.stderr).toBe(0);
      const run = await runById(runId);
      expect(run, JSON.stringify(run.error)).toMatchObject({ id: runId, status: 'completed', result: { text: 'The word is milk.' } });
      expect(run.messages).toMatchObject([{ text: 'Say the word.', delivered_to: 'transcript' }]);
    },
    120_000,
  );
});

describe('an interrupting message to a harness run of the real Claude Code', () => {
  it.skipIf(claude === undefined)(
    claude === undefined
      ? 'skipped: set CADRE_TEST_CLAUDE to run it'
      : 'stops the program at once and starts it again in its own session with the message; the run keeps its id',
    async () => {
      // The earlier test's go: its command must wait here.
      await rm(join(workspace.cwd, 'go.txt'), { force: true });
      const first = workspace.start(['run', ...workspace.modelFlags, '--yes', 'harness chat'], { env: claudeEnv() });
      const [, runId] = await first.waitForStderr(/\[(run_\w+) coder\] started/, 30_000);
      await waitUntil(() => sleepers('gone 3130').length >= 1, 60_000).catch((error: Error) => {
        throw new Error(`${error.message}: ${first.output.stderr}`);
      });
      const session = (await runById(runId)).harness?.session_id;
      const sent = await workspace.run(['send', runId, 'Say the word.', '--interrupt', '--db', workspace.database]);
      expect(sent.code, sent.stderr).toBe(0);
      // No go.txt: the waiting command ends only with the program.
      const result = await first.exited;
      expect(result.code, result.stderr).toBe(0);
      const run = await runById(runId);
      expect(run, JSON.stringify(run.error)).toMatchObject({ id: runId, status: 'completed', result: { text: 'The word is milk.' } });
      expect(run.harness?.session_id).toBe(session);
      expect(sleepers('gone 3130')).toEqual([]);
    },
    120_000,
  );
});

describe('a harness run of the real Claude Code when cadre crashes', () => {
  it.skipIf(claude === undefined)(
    claude === undefined
      ? 'skipped: set CADRE_TEST_CLAUDE to run it'
      : "loses nothing: the program dies with cadre, and the next cadre process resumes the run in the program's own session",
    async () => {
      const first = workspace.start(['run', ...workspace.modelFlags, '--yes', 'harness nap'], { env: claudeEnv() });
      const [, runId] = await first.waitForStderr(/\[(run_\w+) coder\] started/, 30_000);
      await waitUntil(() => sleepers('sleep 3129').length >= 1, 60_000).catch(async (error: Error) => {
        throw new Error(`${error.message}: ${first.output.stderr} ${JSON.stringify(await runById(runId))}`);
      });
      const before = await runById(runId);
      expect(before.harness?.session_id).toBeTruthy();
      first.child.kill('SIGKILL');
      expect((await first.exited).signal).toBe('SIGKILL');
      // The program's pid namespace died with cadre, its shell's sleep with it.
      await waitUntil(() => sleepers('sleep 3129').length === 0, 2_000);
      expect((await runById(runId)).status).toBe('running');

      const second = await workspace.run(['run', ...workspace.modelFlags, '--yes', '--session', before.parent_session_id, 'How is it going?'], {
        env: claudeEnv(),
      });
      expect(second.code, second.stderr).toBe(0);
      const run = await runById(runId);
      expect(run).toMatchObject({ status: 'completed', result: { text: 'Rested after the restart.' }, harness: { session_id: before.harness!.session_id } });
      expect(run.warnings.map((warning) => warning.kind)).toContain('recovered');
    },
    180_000,
  );
});

describe('a harness run of the real Codex', () => {
  it.skipIf(codex === undefined)(
    codex === undefined
      ? 'skipped: set CADRE_TEST_CODEX to run it'
      : 'asks once before it starts for the sandbox cadre would ask about, then completes with its command in the transcript and its usage',
    async () => {
      const result = await workspace.run(['run', ...workspace.modelFlags, '--yes', '--json', 'codex read'], { env: codexEnv() });
      expect(result.code, result.stderr).toBe(0);
      const runId = /(run_\w+)/.exec(result.stdout)![1];
      const run = await runById(runId);
      expect(run, JSON.stringify(run.error)).toMatchObject({
        status: 'completed',
        result: { text: 'There is one note: remember the milk.' },
        harness: { name: 'codex', pid: null },
      });
      expect(run.harness?.session_id).toBeTruthy();
      expect(run.usage).toMatchObject({ input_tokens: expect.any(Number), cache_read_tokens: 40 });
      expect(run.usage.input_tokens).toBeGreaterThan(0);
      // Writing and running commands ask by default: one ask before the start, answered by --yes,
      // gave Codex its workspace-write sandbox.
      const { events } = await workspace.json<{ events: Array<{ type: string; data: Record<string, unknown> }> }>(['show', runId]);
      expect(events.filter((event) => event.type.startsWith('approval-')).map((event) => [event.type, event.data.tool ?? event.data.by])).toEqual([
        ['approval-request', 'codex'],
        ['approval-resolve', 'flag'],
      ]);
      expect(execFileSync('cat', [join(workspace.cwd, 'counted.txt')], { encoding: 'utf8' })).toBe('counted\n');
      const store = createSqliteStore({ path: workspace.database });
      try {
        const parts = (await store.listMessages(run.child_session_id)).flatMap((message) =>
          Array.isArray(message.content) ? (message.content as Array<Record<string, any>>) : [],
        );
        expect(parts).toContainEqual(expect.objectContaining({ type: 'tool-call', toolName: 'shell' }));
        expect(parts).toContainEqual(
          expect.objectContaining({ type: 'tool-result', toolName: 'shell', output: { type: 'text', value: expect.stringContaining('Remember the milk.') } }),
        );
      } finally {
        await store.close();
      }
    },
    120_000,
  );
});

describe('a message to a harness run of the real Codex', () => {
  it.skipIf(codex === undefined)(
    codex === undefined
      ? 'skipped: set CADRE_TEST_CODEX to run it'
      : 'reaches it once its invocation ends, by codex exec resume in its own session, and the run ends with its answer',
    () => messageAtInvocationEnd({ env: codexEnv(), prompt: 'codex chat', agent: 'codexer', sleeper: 'gone 3131', go: 'go2.txt' }),
    120_000,
  );
});

describe('a message to a harness run of the real opencode', () => {
  it.skipIf(opencode === undefined)(
    opencode === undefined
      ? 'skipped: set CADRE_TEST_OPENCODE to run it'
      : 'reaches it once its invocation ends, by opencode run --session, and the run ends with its answer',
    () => messageAtInvocationEnd({ env: opencodeEnv(), prompt: 'opencode chat', agent: 'opener', sleeper: 'gone 3132', go: 'go3.txt' }),
    // Two invocations of opencode, each a few seconds of CPU: it took 106 s here at a load of 15 on 2 cores.
    240_000,
  );
});

describe('a harness run of the real opencode', () => {
  it.skipIf(opencode === undefined)(
    opencode === undefined
      ? 'skipped: set CADRE_TEST_OPENCODE to run it'
      : 'completes with its bash call in the transcript and its usage, bash allowed once before it started',
    async () => {
      const result = await workspace.run(['run', ...workspace.modelFlags, '--yes', '--json', 'opencode read'], { env: opencodeEnv() });
      expect(result.code, result.stderr).toBe(0);
      const runId = /(run_\w+)/.exec(result.stdout)![1];
      const run = await runById(runId);
      expect(run, JSON.stringify(run.error)).toMatchObject({
        status: 'completed',
        result: { text: 'One note: the milk.' },
        harness: { name: 'opencode', pid: null },
      });
      expect(run.harness?.session_id).toMatch(/^ses_/);
      expect(run.turns).toBe(2);
      expect(run.usage.input_tokens).toBeGreaterThan(90);
      const store = createSqliteStore({ path: workspace.database });
      try {
        const parts = (await store.listMessages(run.child_session_id)).flatMap((message) =>
          Array.isArray(message.content) ? (message.content as Array<Record<string, any>>) : [],
        );
        expect(parts).toContainEqual(
          expect.objectContaining({ type: 'tool-call', toolName: 'bash', input: expect.objectContaining({ command: 'cat notes.txt' }) }),
        );
        expect(parts).toContainEqual(
          expect.objectContaining({ type: 'tool-result', toolName: 'bash', output: { type: 'text', value: expect.stringContaining('Remember the milk.') } }),
        );
      } finally {
        await store.close();
      }
    },
    // opencode takes long to start on a loaded machine (it installs nothing: its providers are built in).
    240_000,
  );
});

describe('cadre agents and harness agents', () => {
  it('says for each harness agent whether its program was found, its version, and what cadre will allow it', async () => {
    const folder = await fakeClaude('versioned', 'echo "9.9.9 (Claude Code)"');
    const result = await workspace.run(['agents', '--json', '--db', workspace.database], {
      env: { PATH: `${folder}:${dirname(process.execPath)}:/usr/bin:/bin` },
    });
    expect(result.code, result.stderr).toBe(0);
    const agents = JSON.parse(result.stdout).agents as Array<{ name: string; harness: Record<string, unknown> | null }>;
    const byName = Object.fromEntries(agents.map((agent) => [agent.name, agent.harness]));
    expect(byName.scout).toBeNull();
    expect(byName.coder).toEqual({
      name: 'claude-code',
      command: 'claude',
      path: join(folder, 'claude'),
      found: true,
      version: '9.9.9 (Claude Code)',
      allowed: { asks: 'each-call', read: 'allow', write: 'ask', exec: 'ask', network: 'ask' },
      install: null,
    });
    expect(byName.codexer).toMatchObject({
      name: 'codex',
      found: false,
      version: null,
      allowed: { asks: 'before-start' },
      install: expect.stringContaining('npm install -g @openai/codex'),
    });
    const table = await workspace.run(['agents', '--db', workspace.database], { env: { PATH: `${folder}:${dirname(process.execPath)}:/usr/bin:/bin` } });
    expect(table.stdout).toContain(
      `coder: Claude Code 9.9.9 (Claude Code) at ${join(folder, 'claude')}; asks cadre before each tool use its rules do not allow outright: read allow, write ask, exec ask, network ask`,
    );
  }, 60_000);
});

describe('a harness run with output_schema', () => {
  it("checks the program's final message against the schema and keeps its value", async () => {
    const result = (text: string) =>
      `echo '{"type":"system","subtype":"init","session_id":"ses-shaped"}'\necho '${JSON.stringify({ type: 'result', subtype: 'success', result: text, usage: { input_tokens: 5, output_tokens: 2 } })}'`;
    const good = await fakeClaude('shaped-good', result('{"count": 2}'));
    const first = await workspace.run(['run', ...workspace.modelFlags, '--json', 'harness shaped'], { env: { PATH: `${good}:${process.env.PATH ?? ''}` } });
    const run = await runById(/(run_\w+)/.exec(first.stdout)![1]);
    expect(run).toMatchObject({ status: 'completed', result: { value: { count: 2 } } });
    const bad = await fakeClaude('shaped-bad', result('{"count": "two"}'));
    const second = await workspace.run(['run', ...workspace.modelFlags, '--json', 'harness shaped'], { env: { PATH: `${bad}:${process.env.PATH ?? ''}` } });
    const failed = await runById(/(run_\w+)/.exec(second.stdout)![1]);
    expect(failed).toMatchObject({ status: 'failed', error: { kind: 'invalid_output' }, partial_result: '{"count": "two"}' });
    expect(failed.error?.message).toContain('count');
  }, 60_000);
});

describe('harnesses in the configuration', () => {
  it('finds a program at harnesses.<name>.command, off the PATH', async () => {
    const folder = await fakeClaude('configured', 'echo "8.8.8 (Claude Code)"');
    await writeFile(join(workspace.cwd, 'harness.config.json'), JSON.stringify({ harnesses: { 'claude-code': { command: join(folder, 'claude') } } }));
    const result = await workspace.run(['agents', '--json', '--config', 'harness.config.json', '--db', workspace.database], {
      env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin` },
    });
    expect(result.code, result.stderr).toBe(0);
    const coder = (JSON.parse(result.stdout).agents as Array<{ name: string; harness: unknown }>).find((agent) => agent.name === 'coder');
    expect(coder?.harness).toMatchObject({ command: join(folder, 'claude'), found: true, version: '8.8.8 (Claude Code)' });
  }, 60_000);
});

describe('a harness run whose program misbehaves', () => {
  it('fails at its start with execution_error saying how to install a missing program', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, '--json', 'harness other'], { env: { PATH: dirname(process.execPath) } });
    expect(result.code, result.stderr).toBe(0);
    const runId = /(run_\w+)/.exec(result.stdout)![1];
    const run = await runById(runId);
    expect(run.status).toBe('failed');
    expect(run.error?.kind).toBe('execution_error');
    expect(run.error?.message).toContain(
      "Claude Code is not installed here ('claude' is not on the PATH): install it with npm install -g @anthropic-ai/claude-code",
    );
  }, 60_000);

  it('fails with the last lines of its error output, secrets redacted, when it crashes', async () => {
    const folder = await fakeClaude(
      'crash',
      `echo '{"type":"system","subtype":"init","session_id":"ses-crash"}'\necho 'starting' >&2\necho "fatal: the key ANTHROPIC_API_KEY=$ANTHROPIC_API_KEY was refused" >&2\nexit 3`,
    );
    const result = await workspace.run(['run', ...workspace.modelFlags, '--json', 'harness other'], {
      env: { PATH: `${folder}:${process.env.PATH ?? ''}`, ANTHROPIC_API_KEY: 'sk-ant-secret-value-1234567890' },
    });
    const runId = /(run_\w+)/.exec(result.stdout)![1];
    const run = await runById(runId);
    expect(run.status).toBe('failed');
    expect(run.error?.message).toMatch(
      /^Claude Code exited with code 3\. Its last error output: starting \| fatal: the key ANTHROPIC_API_KEY=\S+ was refused$/,
    );
    expect(JSON.stringify(run)).not.toContain('sk-ant-secret-value-1234567890');
    expect(run.harness).toMatchObject({ name: 'claude-code', session_id: 'ses-crash', pid: null });
  }, 60_000);

  it('fails saying so when it prints something other than its JSON events', async () => {
    const folder = await fakeClaude('garbage', 'echo "Welcome to Claude!"\necho "<html>not json</html>"\nexit 0');
    const result = await workspace.run(['run', ...workspace.modelFlags, '--json', 'harness other'], { env: { PATH: `${folder}:${process.env.PATH ?? ''}` } });
    const runId = /(run_\w+)/.exec(result.stdout)![1];
    const run = await runById(runId);
    expect(run.status).toBe('failed');
    expect(run.error?.message).toBe('Claude Code printed output that is not its JSON events ("Welcome to Claude!") and ended without a result.');
  }, 60_000);
});

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
