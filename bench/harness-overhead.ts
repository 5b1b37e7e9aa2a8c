/**
 * `npm run bench -- --only harness` (`node bench/harness-overhead.ts [--rounds 5] [--quick]`):
 * what cadre adds to a harness run of the real Claude Code (`harness: claude-code`,
 * docs/harnesses.md): the milliseconds from the `agent` call to the program's first model
 * request, against starting the program directly with the same arguments, environment and stdin
 * (built by cadre's own Claude Code dialect); and the host process's RSS while a run works.
 *
 * Both talk to one scripted server (cadre's primary on Chat Completions, Claude Code on Messages
 * through `ANTHROPIC_BASE_URL`), which timestamps each model request as it is answered. The
 * `agent` call's time is when the server answered the primary's request that makes it (its reply
 * has no delay). The two ways take turns, after one warm-up of each, in this one process.
 * `--quick`: 1 round, no warm-up. The program is `CADRE_BENCH_CLAUDE`, else
 * /tmp/harness-bin/node_modules/.bin/claude; skipped with a message when neither exists.
 * @module
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { defineAgent } from '../src/agents/agent-definition.ts';
import { claudeCodeDialect } from '../src/harnesses/claude-code-dialect.ts';
import { createCadre } from '../src/runtime/create-cadre.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { startScriptedServer, type ScriptedRequest, type ScriptedServer, type ScriptedTurn } from '../src/testing/index.ts';
import { fixed, markdownTable, median, probeMemory, temporaryFolder } from './measure.ts';

const task = 'Just answer: what is two and two?';
const system = 'You are the coder. Be brief.';
const maxTurns = 3;
const coder = defineAgent({ name: 'coder', description: 'Answers with Claude Code.', system, harness: 'claude-code', maxTurns, mode: 'subagent' });

function respond(request: ScriptedRequest): ScriptedTurn {
  if (request.tools.includes('agent')) {
    const last = request.messages.findLast((message) => message.role === 'user')?.content ?? '';
    const first = request.messages.find((message) => message.role === 'user')?.content ?? '';
    return request.turn === 0 && last === first ? { tool_calls: [{ name: 'agent', arguments: { agent: 'coder', task } }] } : { text: 'Done.' };
  }
  if (!request.tools.includes('Bash')) return { text: 'A title' };
  return { text: 'Four.' };
}

interface Timeline {
  /** performance.now() of each model request, with its wire and whether it offered `agent`. */
  requests: Array<{ at: number; wire: string; agent: boolean }>;
}

function env(server: ScriptedServer): Record<string, string> {
  return {
    ...(Object.fromEntries(Object.entries(process.env).filter(([, value]) => value !== undefined)) as Record<string, string>),
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: 'test-anthropic-key',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

/** The first Messages request at or after `since`, in ms after `since`. */
function firstProgramRequest(timeline: Timeline, since: number): number {
  const first = timeline.requests.find((request) => request.wire === 'messages' && request.at >= since);
  if (!first) throw new Error('The program made no model request.');
  return first.at - since;
}

/** One run through cadre: ms from the `agent` call to the program's first request, and the host's RSS. */
async function throughCadre(server: ScriptedServer, timeline: Timeline, claude: string, cwd: string) {
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    model: 'openai-compatible:scripted',
    baseURL: server.baseURL,
    env: env(server),
    agents: [coder],
    harnesses: { 'claude-code': { command: claude } },
    workspace: cwd,
    maxRetries: 0,
    onError: (error) => console.error(error),
  });
  try {
    const session = await cadre.createSession();
    const from = timeline.requests.length;
    const memory = probeMemory();
    const turn = await cadre.send(session.id, 'harness overhead');
    const peaks = memory.stop();
    if (turn.status !== 'completed') throw new Error(`The turn ended ${turn.status}.`);
    const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
    if (run?.status !== 'completed' || run.result?.text !== 'Four.') throw new Error(`The harness run ended ${run?.status}: ${JSON.stringify(run?.error)}`);
    const call = timeline.requests.slice(from).find((request) => request.agent);
    if (!call) throw new Error('The primary made no request.');
    return { ms: firstProgramRequest(timeline, call.at), rss: peaks.rss - peaks.startRss, startRss: peaks.startRss };
  } finally {
    await cadre.close();
  }
}

/** The program started directly with the arguments, environment and stdin cadre's dialect gives it. */
async function direct(server: ScriptedServer, timeline: Timeline, claude: string, cwd: string, scratch: string) {
  const invocation = await claudeCodeDialect.invocation({ prompt: task, system, maxTurns, scratch, allowed: { write: false, exec: false, network: false } });
  const started = performance.now();
  const program = spawn(claude, invocation.args, { cwd, env: { ...env(server), PWD: cwd }, stdio: ['pipe', 'pipe', 'pipe'] });
  for (const line of invocation.input ?? []) program.stdin.write(`${line}\n`);
  let output = '';
  program.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    // Its result line ends the run: close stdin as cadre does, and it exits.
    if (output.includes('"type":"result"')) program.stdin.end();
  });
  program.stderr.resume();
  const code = await new Promise<number | null>((resolve) => program.on('exit', resolve));
  if (!output.includes('Four.')) throw new Error(`The program exited ${code} without its answer: ${output.slice(-500)}`);
  return { ms: firstProgramRequest(timeline, started) };
}

/** The figures as Markdown. */
export async function runHarnessOverhead({ rounds = 5, warmUp = 1 }: { rounds?: number; warmUp?: number } = {}): Promise<string> {
  const claude = process.env.CADRE_BENCH_CLAUDE ?? '/tmp/harness-bin/node_modules/.bin/claude';
  if (!existsSync(claude)) return `## Harness overhead (Claude Code)\n\nskipped: no Claude Code at ${claude} (set CADRE_BENCH_CLAUDE to its executable)`;
  const timeline: Timeline = { requests: [] };
  const server = await startScriptedServer({
    script: respond,
    onRequest: (request) => timeline.requests.push({ at: performance.now(), wire: request.wire ?? '', agent: request.tools.includes('agent') }),
  });
  const folder = temporaryFolder('cadre-bench-harness-');
  try {
    const viaCadre: number[] = [];
    const alone: number[] = [];
    const rss: number[] = [];
    let startRss = 0;
    for (let round = 0; round < warmUp + rounds; round++) {
      const cadreRun = await throughCadre(server, timeline, claude, folder.path);
      const directRun = await direct(server, timeline, claude, folder.path, folder.path);
      if (round < warmUp) continue;
      viaCadre.push(cadreRun.ms);
      alone.push(directRun.ms);
      rss.push(cadreRun.rss);
      startRss = cadreRun.startRss;
    }
    const added = viaCadre.map((ms, index) => ms - alone[index]);
    const table = markdownTable(
      [
        'rounds',
        'via cadre ms (median)',
        'program alone ms (median)',
        'added ms (median of pairs)',
        'via cadre / alone',
        'host RSS growth during a run MB (median)',
      ],
      [[rounds, fixed(median(viaCadre)), fixed(median(alone)), fixed(median(added)), fixed(median(viaCadre) / median(alone), 2), fixed(median(rss), 1)]],
    );
    return `## Harness overhead (Claude Code)\n\nFrom the \`agent\` call (or the program's spawn) to the program's first model request; cadre's host process at ${fixed(startRss)} MB RSS before a run. Each round: ${viaCadre.map((ms, index) => `${fixed(ms)}/${fixed(alone[index])}`).join(', ')} ms (cadre/alone).\n\n${table}`;
  } finally {
    folder.remove();
    await server.close();
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { rounds: { type: 'string' }, quick: { type: 'boolean', default: false } }, strict: false });
  const rounds = values.rounds !== undefined ? Number(values.rounds) : values.quick ? 1 : 5;
  if (!Number.isInteger(rounds) || rounds < 1) {
    console.error('--rounds takes a positive whole number.');
    process.exit(2);
  }
  console.log(await runHarnessOverhead({ rounds, warmUp: values.quick ? 0 : 1 }));
}
