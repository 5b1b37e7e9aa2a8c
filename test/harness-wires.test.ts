// The real Claude Code and Codex programs against the scripted server, each completing a turn
// with a tool call. They are not dependencies of cadre: install them elsewhere and point
// CADRE_TEST_CLAUDE / CADRE_TEST_CODEX at their executables, or put `claude` / `codex` on PATH.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedServer, type Script, type ScriptedServer } from '../src/testing/index.ts';
import { writeCodexConfig } from './helpers/harness-programs.ts';

function findProgram(variable: string, name: string): string | undefined {
  const explicit = process.env[variable];
  if (explicit) return explicit;
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(folder, name), constants.X_OK);
      return join(folder, name);
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}

const claude = findProgram('CADRE_TEST_CLAUDE', 'claude');
const codex = findProgram('CADRE_TEST_CODEX', 'codex');
for (const [program, name, variable] of [
  [claude, 'Claude Code', 'CADRE_TEST_CLAUDE'],
  [codex, 'Codex', 'CADRE_TEST_CODEX'],
]) {
  if (program === undefined) console.warn(`harness-wires: skipping ${name}: not installed (set ${variable} or put it on PATH)`);
}

let server: ScriptedServer | undefined;
let folder: string | undefined;
afterEach(async () => {
  await server?.close();
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  server = undefined;
  folder = undefined;
});

/** A folder holding notes.txt, and the scripted server answering `script`. */
async function setUp(script: (notes: string) => Script): Promise<{ cwd: string; home: string; server: ScriptedServer }> {
  folder = await realpath(await mkdtemp(join(tmpdir(), 'cadre-harness-')));
  const cwd = join(folder, 'project');
  const home = join(folder, 'home');
  await mkdir(cwd);
  await mkdir(home);
  await writeFile(join(cwd, 'notes.txt'), 'Remember the milk.\n');
  server = await startScriptedServer({ script: script(join(cwd, 'notes.txt')) });
  return { cwd, home, server };
}

/** Runs a program to its end; its stdout as JSON Lines (other lines dropped). */
function runProgram(command: string, args: string[], options: { cwd: string; env: Record<string, string> }) {
  return new Promise<{ code: number | null; events: Array<Record<string, any>>; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const events = stdout.split('\n').flatMap((line) => {
        try {
          return line.startsWith('{') ? [JSON.parse(line) as Record<string, any>] : [];
        } catch {
          return [];
        }
      });
      resolve({ code, events, stderr });
    });
  });
}

const answer = 'The notes say to remember the milk.';
const cacheUsage = { input_tokens: 100, output_tokens: 9, cache_read_input_tokens: 60, cache_creation_input_tokens: 30 };

describe('Claude Code against the scripted Messages wire', () => {
  it.skipIf(claude === undefined)(
    claude === undefined
      ? 'skipped: Claude Code is not installed (set CADRE_TEST_CLAUDE or put claude on PATH)'
      : 'reads a file with its Read tool and answers',
    async () => {
      const { cwd, home, server } = await setUp((notes) => [
        {
          when: { user_includes: 'What do my notes say?', has_tool: 'Read' },
          turns: [
            { text: 'Reading them.', tool_calls: [{ name: 'Read', arguments: { file_path: notes } }] },
            { text: answer, usage: cacheUsage },
          ],
        },
      ]);
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: home,
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'test-key',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      };
      const { code, events, stderr } = await runProgram(claude!, ['-p', 'What do my notes say?', '--output-format', 'stream-json', '--verbose'], { cwd, env });
      expect(code, stderr).toBe(0);
      const toolResult = events
        .filter((event) => event.type === 'user')
        .flatMap((event) => event.message.content)
        .find((block) => block.type === 'tool_result');
      expect(toolResult).toMatchObject({ tool_use_id: 'call_1_0_0', content: expect.stringContaining('Remember the milk.') });
      expect(events.at(-1)).toMatchObject({ type: 'result', is_error: false, result: answer });
      expect(events.at(-1)!.usage).toMatchObject({ cache_read_input_tokens: 60, cache_creation_input_tokens: 30 });

      const turns = server.requests.filter((request) => request.system.includes('Claude'));
      expect(turns.map((request) => [request.wire, request.turn])).toEqual([
        ['messages', 0],
        ['messages', 1],
      ]);
      expect(turns[1].messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_1_0_0', content: expect.stringContaining('Remember the milk.') });
      // Nothing it sent went unanswered by a route of the server.
      expect(server.received.every((request) => ['/v1/messages', '/v1/messages/count_tokens', '/v1/models'].includes(request.path))).toBe(true);
    },
    120_000,
  );
});

describe('Codex against the scripted Responses wire', () => {
  it.skipIf(codex === undefined)(
    codex === undefined
      ? 'skipped: Codex is not installed (set CADRE_TEST_CODEX or put codex on PATH)'
      : 'runs a command with its exec_command tool and answers',
    async () => {
      const { cwd, home, server } = await setUp(() => [
        {
          when: { last_user_includes: 'What do my notes say?', has_tool: 'exec_command' },
          turns: [
            { text: 'Reading them.', tool_calls: [{ name: 'exec_command', arguments: { cmd: 'cat notes.txt' } }] },
            { text: answer, usage: cacheUsage },
          ],
        },
      ]);
      const codexHome = join(home, '.codex');
      await mkdir(codexHome);
      await writeCodexConfig(codexHome, server.baseURL);
      const env = { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: codexHome, SCRIPTED_API_KEY: 'test-key' };
      // Its own sandbox needs helper binaries it will not create under a temporary folder.
      const args = ['exec', '--json', '--skip-git-repo-check', '--sandbox', 'danger-full-access', 'What do my notes say?'];
      const { code, events, stderr } = await runProgram(codex!, args, { cwd, env });
      expect(code, stderr).toBe(0);
      const command = events.find((event) => event.type === 'item.completed' && event.item.type === 'command_execution');
      expect(command?.item).toMatchObject({ exit_code: 0, aggregated_output: expect.stringContaining('Remember the milk.') });
      const messages = events.filter((event) => event.type === 'item.completed' && event.item.type === 'agent_message');
      expect(messages.map((event) => event.item.text)).toEqual(['Reading them.', answer]);
      expect(events.at(-1)).toMatchObject({ type: 'turn.completed', usage: { cached_input_tokens: 60 } });

      expect(server.requests.map((request) => [request.wire, request.turn])).toEqual([
        ['responses', 0],
        ['responses', 1],
      ]);
      expect(server.requests[1].messages.at(-1)).toMatchObject({
        role: 'tool',
        tool_call_id: 'call_2_0_0',
        content: expect.stringContaining('Remember the milk.'),
      });
      expect(server.received.every((request) => ['/v1/responses', '/v1/models'].includes(request.path))).toBe(true);
    },
    120_000,
  );
});
