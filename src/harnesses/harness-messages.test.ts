import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentDefinition, HarnessName } from '../agents/agent-definition.ts';
import { createRunBus } from '../runs/run-bus.ts';
import type { RunMessageFeed } from '../runs/run-executor.ts';
import type { DeliveredMessage } from '../runs/run-inbox.ts';
import { createRunLedger } from '../runs/run-ledger.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { Store } from '../store/store.ts';
import { eventFixture, runFixture, sessionFixture } from '../store/store-fixtures.ts';
import { createHarnessExecutor } from './harness-executor.ts';

let folder: string;
let store: Store;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'cadre-harness-messages-'));
  store = createSqliteStore({ path: ':memory:' });
  await store.createSession(sessionFixture());
  await store.createSession(sessionFixture({ id: 'ses_child', parent_run_id: 'run_1' }));
  const run = runFixture({ id: 'run_1', child_session_id: 'ses_child', status: 'running', started_at: '2025-01-01T00:00:01.000Z', task: 'Do the job.' });
  await store.insertRun(run, eventFixture(run.id, 'run-start'));
});
afterEach(async () => {
  await store.close();
  await rm(folder, { recursive: true, force: true });
});

/** A program standing in for one agent program: a bash script. */
async function fakeProgram(name: string, script: string): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, `#!/bin/bash\n${script}\n`);
  await chmod(path, 0o755);
  return path;
}

/** A feed holding one message, which waits once `ready()` says so. */
function oneMessage(ready: () => boolean): RunMessageFeed & { taken: number } {
  const message: DeliveredMessage = { id: 'msg_1', from: 'parent', interrupt: false, text: 'Also check the tests.' };
  const feed = {
    taken: 0,
    waiting: () => feed.taken === 0 && ready(),
    take: async () => {
      if (feed.taken > 0) return [];
      feed.taken++;
      return [message];
    },
  };
  return feed;
}

async function execute(harness: HarnessName, program: string, feed: RunMessageFeed) {
  const bus = createRunBus();
  let clock = Date.parse('2025-01-01T00:00:02.000Z');
  const now = () => new Date((clock += 10)).toISOString();
  const ledger = createRunLedger({ store, bus, now });
  const agent = { name: 'coder', description: 'Codes.', tools: [], mode: 'subagent', harness, system: '' } as unknown as AgentDefinition;
  const executor = createHarnessExecutor({
    store,
    bus,
    now,
    ownerId: 'test',
    ledger,
    agent: () => agent,
    commands: { [harness]: { command: program } },
    workspaceOf: () => folder,
    containment: 'process-tree',
  });
  const run = (await store.getRun('run_1'))!;
  return executor.execute(run, new AbortController().signal, { messages: feed });
}

describe('messages to a harness run', () => {
  it('reach Claude Code as its next user message on its stream-json input when its turn ends, in the same process', async () => {
    const mark = join(folder, 'working');
    const seen = join(folder, 'seen');
    // It works on its first turn, ends it, then waits (5 s at most) for a next user message.
    const claude = await fakeProgram(
      'claude',
      `read -r first
echo '{"type":"system","subtype":"init","session_id":"ses-fake"}'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"Working."}]}}'
touch '${mark}'
echo '{"type":"result","subtype":"success","result":"First done.","usage":{"input_tokens":3,"output_tokens":1}}'
if read -r -t 5 second; then
  printf '%s\\n' "$second" > '${seen}'
  echo '{"type":"result","subtype":"success","result":"Checked the tests too.","usage":{"input_tokens":4,"output_tokens":2}}'
fi
read -r -t 5 third && echo "{\\"unexpected\\": 1}"
exit 0`,
    );
    const feed = oneMessage(() => existsSync(mark));
    const outcome = await execute('claude-code', claude, feed);
    expect(outcome).toMatchObject({ text: 'Checked the tests too.', finishReason: 'stop' });
    expect(JSON.parse(await readFile(seen, 'utf8'))).toEqual({ type: 'user', message: { role: 'user', content: 'Also check the tests.' } });
    expect(feed.taken).toBe(1);
    // Each turn's totals add up.
    expect((await store.getRun('run_1'))?.usage).toMatchObject({ input_tokens: 7, output_tokens: 3 });
  }, 20_000);

  it('reach Codex when its invocation ends, by resuming its session with the message', async () => {
    const calls = join(folder, 'calls');
    // Each invocation writes its arguments down and ends its turn; the message waits once the first has.
    const codex = await fakeProgram(
      'codex',
      `printf '%s\\n' "$*" >> '${calls}'
echo '{"type":"thread.started","thread_id":"thread-7"}'
last="\${@: -1}"
echo "{\\"type\\":\\"item.completed\\",\\"item\\":{\\"type\\":\\"agent_message\\",\\"text\\":\\"Did: $last\\"}}"
echo '{"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":1}}'`,
    );
    const feed = oneMessage(() => existsSync(calls));
    const outcome = await execute('codex', codex, feed);
    const invocations = (await readFile(calls, 'utf8')).trim().split('\n');
    expect(invocations).toHaveLength(2);
    expect(invocations[0]).not.toContain('resume');
    expect(invocations[1]).toMatch(/^exec resume .* thread-7 -- Also check the tests\.$/);
    expect(outcome).toMatchObject({ text: 'Did: Also check the tests.', finishReason: 'stop' });
    expect((await store.getRun('run_1'))?.usage).toMatchObject({ input_tokens: 10, output_tokens: 2 });
  }, 20_000);
});
