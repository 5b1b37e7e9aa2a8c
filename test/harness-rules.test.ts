// cadre's rules win over what the real Claude Code would do without asking (docs/harnesses.md,
// Approvals): a tool a rule denies is not given to it (--disallowedTools), and one a rule may ask
// about comes to cadre each time (an ask rule in --settings), its Read and its read-only Bash
// commands included, which it otherwise runs without asking. The program is not a dependency of
// cadre: .ci/run installs it and sets CADRE_TEST_CLAUDE.
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { ScriptedRequest, ScriptedTurn } from '../src/testing/index.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

const claude = process.env.CADRE_TEST_CLAUDE;
if (claude === undefined) console.warn('harness-rules: skipping the runs of the real Claude Code: set CADRE_TEST_CLAUDE to its executable (.ci/run does)');

const agents = {
  // Reads are allowed by default: this agent's own rule denies them.
  'no-reader': `---\ndescription: Reads nothing.\nharness: claude-code\nmode: subagent\npermissions:\n  deny: [read_file]\n---\nBe brief.\n`,
  // Its rule asks about reading the notes; running commands asks by default.
  'asking-reader': `---\ndescription: Asks before it reads.\nharness: claude-code\nmode: subagent\npermissions:\n  ask: [read_file(notes.txt)]\n---\nBe brief.\n`,
};
const denied = 'Read the notes, if you may.';
const asked = 'Read the notes twice.';

let workspace: Workspace | undefined;
afterAll(() => workspace?.close());

/** The scripted model: cadre's primary agent on Chat Completions, Claude Code on Messages. */
function respond(request: ScriptedRequest): ScriptedTurn {
  const users = request.messages.filter((message) => message.role === 'user').map((message) => message.content);
  if (request.tools.includes('agent_parallel')) {
    return request.turn === 0
      ? {
          tool_calls: [
            {
              name: 'agent_parallel',
              arguments: {
                tasks: [
                  { agent: 'no-reader', task: denied },
                  { agent: 'asking-reader', task: asked },
                ],
              },
            },
          ],
        }
      : { text: 'Both tried.' };
  }
  if (!request.tools.includes('Bash')) return { text: 'A title' };
  const read = { name: 'Read', arguments: { file_path: join(workspace!.cwd, 'notes.txt') } };
  const results = request.messages.filter((message) => message.role === 'tool').map((message) => message.content);
  const milk = results.filter((content) => content.includes('Remember the milk.')).length;
  if (users.some((content) => content.includes(denied))) {
    return request.turn === 0 ? { text: 'Reading.', tool_calls: [read] } : { text: milk > 0 ? 'It says milk.' : 'I may not read the notes.' };
  }
  if (users.some((content) => content.includes(asked))) {
    return request.turn === 0
      ? { text: 'Reading.', tool_calls: [read, { name: 'Bash', arguments: { command: 'cat notes.txt', description: 'read the notes' } }] }
      : { text: `Read them ${milk} times.` };
  }
  return { text: 'Nothing to do.' };
}

describe("cadre's rules on what Claude Code would do without asking", () => {
  it.skipIf(claude === undefined)(
    claude === undefined
      ? 'skipped: set CADRE_TEST_CLAUDE to run it'
      : 'a Read a rule denies is not there for it and the run goes on; a Read a rule asks about and a read-only cat come to cadre as asks',
    async () => {
      workspace = await createWorkspace({ script: respond });
      for (const [name, file] of Object.entries(agents)) await writeFile(join(workspace.cwd, '.cadre', 'agents', `${name}.md`), file);
      const bin = join(workspace.cwd, '.bin');
      await mkdir(bin);
      await symlink(claude!, join(bin, 'claude'));
      const env = {
        PATH: `${bin}:${process.env.PATH ?? ''}`,
        ANTHROPIC_BASE_URL: workspace.server.url,
        ANTHROPIC_API_KEY: 'test-anthropic-key',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      };
      const result = await workspace.run(['run', ...workspace.modelFlags, '--yes', 'Try reading.'], { env });
      expect(result.code, result.stderr).toBe(0);
      const store = createSqliteStore({ path: workspace.database });
      try {
        const runs = await store.listRuns({});
        const byAgent = Object.fromEntries(runs.map((run) => [run.agent, run]));

        // Denied: Claude Code was not given Read; its call failed as a call of no tool, and the run went on.
        const noReader = byAgent['no-reader'];
        expect(noReader, JSON.stringify(runs.map((run) => [run.agent, run.status, run.error]))).toMatchObject({
          status: 'completed',
          result: { text: 'I may not read the notes.' },
        });
        const deniedTurns = workspace.server.requests.filter(
          (request) => request.tools.includes('Bash') && request.messages.some((m) => m.content.includes(denied)),
        );
        expect(deniedTurns.length).toBeGreaterThan(0);
        for (const request of deniedTurns) expect(request.tools).not.toContain('Read');
        const parts = (await store.listMessages(noReader.child_session_id)).flatMap((message) =>
          Array.isArray(message.content) ? (message.content as Array<Record<string, any>>) : [],
        );
        const readResult = parts.find((part) => part.type === 'tool-result' && part.toolName === 'Read');
        expect(JSON.stringify(readResult)).toContain('No such tool available: Read');

        // Asked: both the Read and the cat came to cadre's approvals (--yes answered them), then ran.
        const askingReader = byAgent['asking-reader'];
        expect(askingReader).toMatchObject({ status: 'completed', result: { text: 'Read them 2 times.' } });
        const approvals = await store.listApprovals({ run_id: askingReader.id });
        expect(approvals.map((approval) => [approval.tool, approval.argument, approval.status]).sort()).toEqual([
          ['bash', 'cat notes.txt', 'approved'],
          ['read_file', 'notes.txt', 'approved'],
        ]);
        expect(await store.listApprovals({ run_id: noReader.id })).toEqual([]);
      } finally {
        await store.close();
      }
    },
    120_000,
  );
});
