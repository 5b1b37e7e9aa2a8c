/**
 * The cost of cadre inside a user's own AI SDK loop: the user's `generateText` loop with
 * `cadre.tools()` against the same loop with a plain `agent` tool that runs the subagent with
 * `generateText` (no storage), per model call. Also what an open `writeRunParts` costs runs it
 * does not watch (another session's page) and runs it does.
 *
 * `node --expose-gc bench/own-loop.ts [--quick]`, or `npm run bench -- --only own-loop`.
 * @module
 */
import { generateText, isStepCount, tool, type LanguageModel, type ToolSet } from 'ai';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { createCadre, type Cadre } from '../src/runtime/create-cadre.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { createBenchModel, type BenchModel } from './bench-model.ts';
import { createErrorSink, noopTool, workerAgent, workerSystem } from './bench-tools.ts';
import { collectGarbage, fixed, markdownTable, median, startClock, temporaryFolder } from './measure.ts';

/** Sizes and repetitions of the benchmark. */
export interface OwnLoopOptions {
  /** Subagents the user's model delegates to in one step. @default 20 */
  fanOut?: number;
  /** Tool calls of each subagent before it answers. @default 5 */
  toolCalls?: number;
  rounds?: number;
  warmUp?: number;
}

const userInstructions = 'You are the app. Delegate the parts of the work.';

/** The user's own loop: `generateText` with the given tools, until the model answers. */
async function userLoop(model: LanguageModel, tools: ToolSet): Promise<void> {
  const result = await generateText({ model, instructions: userInstructions, prompt: 'Fan out the work.', tools, stopWhen: isStepCount(5) });
  if (result.text === '') throw new Error('The user loop ended without an answer.');
}

/** The baseline: a plain tool that runs the subagent's loop with `generateText`. */
function plainAgentTool(model: LanguageModel, toolCalls: number) {
  return tool({
    description: 'Delegates one task to a subagent and returns its answer.',
    inputSchema: z.object({ agent: z.string(), task: z.string(), description: z.string().optional() }),
    execute: async ({ task }) =>
      (await generateText({ model, instructions: workerSystem, prompt: task, tools: { noop: noopTool }, stopWhen: isStepCount(toolCalls + 1) })).text,
  });
}

interface Case {
  name: string;
  round: () => Promise<void>;
  perCall: number[];
  cpuPerCall: number[];
}

/** Runs the benchmark; resolves with a Markdown table. */
export async function runOwnLoop(options: OwnLoopOptions = {}): Promise<string> {
  const { fanOut = 20, toolCalls = 5, rounds = 20, warmUp = 3 } = options;
  const model: BenchModel = createBenchModel({ fanOut, background: false, toolCalls, answerChars: 2000 });
  const folder = temporaryFolder('cadre-bench-own-loop');
  const errors = createErrorSink();
  const limits = { maxActivePerParent: Math.max(5, fanOut), maxQueuedPerParent: Math.max(50, fanOut), maxActiveGlobal: Math.max(64, fanOut) };
  const cadre: Cadre = createCadre({
    store: createSqliteStore({ path: join(folder.path, 'cadre.db') }),
    model,
    agents: [workerAgent],
    tools: { noop: noopTool },
    limits,
    onError: errors.report,
  });
  let sessions = 0;
  const plain = { agent: plainAgentTool(model, toolCalls) };

  const cadreRound = async (watch: 'none' | 'other' | 'same') => {
    const sessionId = `bench-${++sessions}`;
    const tools = cadre.tools({ sessionId });
    const stop = new AbortController();
    const loop = userLoop(model, tools);
    // A page open on another session (whose runs keep it open) or on this one; parts are dropped.
    const writer = { write: () => {} };
    const watching =
      watch === 'none'
        ? Promise.resolve()
        : cadre.writeRunParts(writer, {
            sessionId: watch === 'same' ? sessionId : 'bench-page',
            loop: watch === 'same' ? loop : new Promise(() => {}),
            signal: stop.signal,
          });
    await loop;
    if (watch === 'other') stop.abort();
    await watching;
    await cadre.store.flush();
    errors.check('own loop');
  };

  const cases: Case[] = [
    { name: 'plain tool calling generateText (baseline)', round: () => userLoop(model, plain), perCall: [], cpuPerCall: [] },
    { name: 'cadre.tools, SQLite file store', round: () => cadreRound('none'), perCall: [], cpuPerCall: [] },
    { name: 'cadre.tools, writeRunParts open on another session', round: () => cadreRound('other'), perCall: [], cpuPerCall: [] },
    { name: 'cadre.tools, writeRunParts on this session', round: () => cadreRound('same'), perCall: [], cpuPerCall: [] },
  ];
  const round = async (entry: Case, measured: boolean) => {
    const before = model.calls;
    const elapsed = startClock();
    await entry.round();
    const { wallMs, cpuMs } = elapsed();
    const calls = model.calls - before;
    if (calls !== 2 + fanOut * (toolCalls + 1)) throw new Error(`${entry.name}: ${calls} model calls, expected ${2 + fanOut * (toolCalls + 1)}`);
    if (measured) {
      entry.perCall.push((wallMs * 1000) / calls);
      entry.cpuPerCall.push((cpuMs * 1000) / calls);
    }
  };
  try {
    for (const entry of cases) for (let index = 0; index < warmUp; index++) await round(entry, false);
    // Cases take turns round by round, so the machine's drift reaches them alike.
    for (let index = 0; index < rounds; index++) {
      for (const entry of cases) {
        collectGarbage();
        await round(entry, true);
      }
    }
  } finally {
    await cadre.close();
    await cadre.store.close();
    folder.remove();
  }
  const [baseline] = cases;
  const rows = cases.map((entry) => [
    entry.name,
    fixed(median(entry.perCall)),
    fixed(median(entry.cpuPerCall)),
    `${fixed(median(entry.perCall) / median(baseline!.perCall), 2)}×`,
    `${fixed(median(entry.cpuPerCall) / median(baseline!.cpuPerCall), 2)}×`,
  ]);
  return [
    `## cadre.tools in a user's generateText loop (N=${fanOut} subagents × ${toolCalls} tool calls, ${rounds} rounds, medians)\n`,
    markdownTable(['case', 'wall µs / model call', 'CPU µs / model call', 'wall vs baseline', 'CPU vs baseline'], rows),
  ].join('\n');
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  console.log(await runOwnLoop(values.quick ? { fanOut: 5, toolCalls: 2, rounds: 3, warmUp: 1 } : {}));
}
