import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { AgentDefinition, HarnessName } from '../agents/agent-definition.ts';
import type { LoopContext } from '../executors/loop-context.ts';
import { messageText } from '../executors/message-codec.ts';
import { createRunRecorder, type RunRecorder } from '../executors/run-recorder.ts';
import type { RunLive } from '../executors/run-setup.ts';
import { failedOutcome, type ExecutionOutcome, type RunExecutor, type RunMessageFeed } from '../runs/run-executor.ts';
import type { DeliveredMessage } from '../runs/run-inbox.ts';
import type { RunLedger } from '../runs/run-ledger.ts';
import type { TokenBudget } from '../runs/token-budget.ts';
import type { HarnessRecord, RunRecord, Usage } from '../store/records.ts';
import { systemNowMs } from '../util/clock.ts';
import { jsonText } from '../output/output-capture.ts';
import { outputValidator } from '../output/output-schema.ts';
import { reportToDefaultLogger } from '../logging/default-logger.ts';
import { claudeCodeDialect } from './claude-code-dialect.ts';
import { codexDialect } from './codex-dialect.ts';
import { opencodeDialect } from './opencode-dialect.ts';
import { startContained, type Containment, type ContainedProcess } from './contained-process.ts';
import { displayName, findHarnessProgram, missingProgramMessage, type HarnessCommands } from './find-harness-program.ts';
import type { HarnessAllowance, HarnessDialect, HarnessEvent, HarnessToolRules } from './harness-dialect.ts';
import { createHarnessSteps, type HarnessSteps } from './harness-steps.ts';
import { endLeftProgram } from './end-left-program.ts';
import { createStderrTail } from './stderr-tail.ts';

/** An ask of a program, for cadre's approvals. */
export interface HarnessAsk {
  run: RunRecord;
  agent: AgentDefinition;
  /** The tool as cadre's rules name it (`bash`, `write_file`), or the program's own name for others. */
  tool: string;
  /** The program's name of the tool (`Bash`). */
  programTool: string;
  input: Record<string, unknown>;
  signal: AbortSignal;
  live: RunLive;
}

/** Answers a program's ask through cadre's approvals: the rules, then a person. */
export type HarnessApprover = (ask: HarnessAsk) => Promise<{ allow: boolean; message?: string }>;

/** Options of {@link createHarnessExecutor}. */
export interface HarnessExecutorOptions extends LoopContext {
  ledger: RunLedger;
  agent: (name: string) => AgentDefinition | undefined;
  /** Where programs are, where not on the PATH. @default {} */
  commands?: HarnessCommands;
  /** cadre's environment, which the programs get. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** The folder a run works in (its worktree, for a run that has one). */
  workspaceOf: (run: RunRecord) => string | Promise<string>;
  /** Answers the program's asks. @default every ask denied */
  approve?: HarnessApprover;
  /** What a program that cannot ask mid-run is allowed in `cwd` (where it works), from cadre's rules (asking once where a rule asks). @default nothing */
  allowance?: (run: RunRecord, agent: AgentDefinition, signal: AbortSignal, live: RunLive, cwd: string) => Promise<HarnessAllowance>;
  /**
   * cadre's rules on the tools a program that asks mid-run would use without asking (its
   * {@link HarnessDialect.ruledTools}), given to it as it starts. @default none: its own defaults
   */
  toolRules?: (run: RunRecord, agent: AgentDefinition, tools: readonly string[]) => Promise<HarnessToolRules>;
  /** How long a program may print nothing while it waits for its model. @default 600000 */
  modelTimeoutMs?: number;
  budget?: TokenBudget;
  /** @default detected: a pid namespace where bubblewrap makes one */
  containment?: Containment;
  /** @default Claude Code, Codex and opencode */
  dialects?: Partial<Record<HarnessName, HarnessDialect>>;
  activityIntervalMs?: number;
}

/** The dialects cadre knows. */
export const harnessDialects: Partial<Record<HarnessName, HarnessDialect>> = {
  'claude-code': claudeCodeDialect,
  codex: codexDialect,
  opencode: opencodeDialect,
};

/** What a program resumed after cadre's process died is told. */
const recoveredPrompt = "cadre's process restarted while you worked on the task above. Go on with it where you left off, and end with your answer.";

const noAllowance: HarnessAllowance = { write: false, exec: false, network: false };

/**
 * Executes runs of `harness:` agents by their program (docs/harnesses.md): started in the run's
 * workspace in its machine-readable mode, in a pid namespace of its own (a stop ends everything it
 * started), its events recorded as the run's steps, its asks answered by cadre's approvals, its
 * usage and cost kept, its session id stored to resume it. One engine for every program; each
 * program is a {@link HarnessDialect}.
 */
export function createHarnessExecutor(options: HarnessExecutorOptions): RunExecutor {
  const { store, ledger, bus, now } = options;
  const nowMs = options.nowMs ?? systemNowMs;
  const report = options.onError ?? reportToDefaultLogger;
  const env = options.env ?? process.env;
  const dialects = { ...harnessDialects, ...options.dialects };
  const redact = (text: string) => options.redactor?.redact(text) ?? text;
  const modelTimeoutMs = options.modelTimeoutMs ?? 600_000;

  /**
   * The message the program starts with: the newest user message of the child session (the task,
   * or a resumed run's message); for a run that already went on in its program's session (a later
   * pass, after a message came as it ended or interrupted it), the messages taken; for a run
   * recovered after a crash, its program's session already holds the task, and it is told to go on.
   */
  async function promptOf(run: RunRecord, taken: readonly DeliveredMessage[]): Promise<string> {
    if (run.harness?.session_id) return taken.length > 0 ? messagesPrompt(taken) : recoveredPrompt;
    const messages = await store.listMessages(run.child_session_id);
    const last = messages.findLast((message) => message.role === 'user');
    return last === undefined ? run.task : messageText(last.content);
  }

  /** The program's session to go on with: this run's own (recovered), else the run it follows. */
  async function previousSession(run: RunRecord): Promise<string | undefined> {
    if (run.harness?.session_id) return run.harness.session_id;
    if (run.resumed_from === null) return undefined;
    return (await store.getRun(run.resumed_from))?.harness?.session_id ?? undefined;
  }

  return {
    async execute(run, signal, context) {
      const messages = context?.messages;
      const agent = options.agent(run.agent);
      const dialect = agent?.harness === undefined ? undefined : dialects[agent.harness];
      if (!agent || !dialect) return failedOutcome(new Error(`Agent '${run.agent}' names no agent program cadre knows.`));
      const spent = await options.budget?.exceeded(run, run.usage);
      if (spent) return { text: '', lastText: '', finishReason: 'budget', steps: run.turns, error: { kind: 'budget_exceeded', message: spent } };
      const found = findHarnessProgram(dialect, options.commands ?? {}, env.PATH);
      // A run recovered after a crash: its program may still be alive on this host, which goes
      // first; then the run goes on in the program's own session, where there is one.
      if (run.harness) {
        await endLeftProgram(run.harness, found.path ?? found.command).catch(report);
        if (!run.harness.session_id) {
          return {
            text: '',
            lastText: '',
            finishReason: 'error',
            steps: run.turns,
            abandoned: `${displayName(dialect)} had not said its session when cadre's process died: it cannot be resumed.`,
          };
        }
      }
      if (found.path === null) return failedOutcome(new Error(missingProgramMessage(dialect, found)));
      const recorder = createRunRecorder({
        run,
        store,
        ledger,
        bus,
        now,
        nowMs,
        journal: plainJournal,
        signal,
        activityIntervalMs: options.activityIntervalMs,
      });
      const live: RunLive = { setActivity: (activity) => recorder.setActivity(activity), writePending: () => recorder.writePending() };
      const scratch = await mkdtemp(join(tmpdir(), 'cadre-harness-'));
      try {
        // A later pass of a run that went on in its program's session starts with what was sent.
        const taken = run.harness?.session_id && messages?.waiting() ? await messages.take() : [];
        // A run in its own worktree starts its program there (the executor seam's place).
        const [first, previous, cwd] = await Promise.all([promptOf(run, taken), previousSession(run), context?.place?.cwd ?? options.workspaceOf(run)]);
        const allowed = dialect.asksMidRun ? noAllowance : ((await options.allowance?.(run, agent, signal, live, cwd)) ?? noAllowance);
        const tools = dialect.asksMidRun && dialect.ruledTools ? await options.toolRules?.(run, agent, dialect.ruledTools) : undefined;
        let prompt = first;
        let sessionId = previous;
        let turns = run.turns;
        let outcome: ExecutionOutcome;
        // Invocations of the program: one, and one more resuming its session for each batch of
        // messages that waits as the last ends (docs/harnesses.md).
        for (;;) {
          if (signal.aborted) return stoppedOutcome(run, '', turns - run.turns);
          const invocation = await dialect.invocation({
            prompt,
            system: agent.system,
            ...(agent.model !== undefined ? { model: agent.model } : {}),
            maxTurns: Math.max(1, run.max_turns - turns),
            ...(sessionId !== undefined ? { sessionId } : {}),
            scratch,
            allowed,
            ...(tools ? { tools } : {}),
            ...(run.output_schema ? { outputSchema: run.output_schema } : {}),
          });
          const program = startContained(found.path, invocation.args, {
            cwd,
            env: { ...stringEnv(env), ...invocation.env },
            containment: options.containment,
          });
          const base: Usage = { ...recorder.usage };
          const ended = await carryOut({ run, turns, base, agent, dialect, program, invocation, recorder, live, signal, sessionId, messages });
          outcome = ended.outcome;
          if (outcome.error || outcome.finishReason !== 'stop' || signal.aborted || ended.sessionId === null || !messages?.waiting()) break;
          const more = await messages.take();
          if (more.length === 0) break;
          prompt = messagesPrompt(more);
          sessionId = ended.sessionId;
          turns = outcome.steps;
        }
        await recorder.loopEnded();
        options.budget?.release(run.id);
        await recorder.close();
        return outcome;
      } catch (error) {
        await recorder.close();
        return failedOutcome(error);
      } finally {
        await rm(scratch, { recursive: true, force: true }).catch(report);
      }
    },
  };

  interface Invocation {
    run: RunRecord;
    /** The run's turns before this invocation. */
    turns: number;
    /** The run's usage before this invocation (the program reports its own totals). */
    base: Usage;
    messages: RunMessageFeed | undefined;
    agent: AgentDefinition;
    dialect: HarnessDialect;
    program: ContainedProcess;
    invocation: { input?: string[]; interactive: boolean };
    recorder: RunRecorder;
    live: RunLive;
    signal: AbortSignal;
    sessionId: string | undefined;
  }

  /**
   * Runs the program to its end (or until the run stops), recording what it reports; a program
   * that takes input while it works is given the messages sent meanwhile. Resolves its outcome and
   * the program's session (null where it said none).
   */
  async function carryOut(context: Invocation): Promise<{ outcome: ExecutionOutcome; sessionId: string | null }> {
    const harness: HarnessRecord = { name: context.dialect.name, session_id: context.sessionId ?? null, pid: context.program.pid, host: hostname() };
    const outcome = await invoke(context, harness);
    return { outcome, sessionId: harness.session_id };
  }

  async function invoke(context: Invocation, harness: HarnessRecord): Promise<ExecutionOutcome> {
    const { run, agent, dialect, program, recorder, live, signal, messages } = context;
    const name = displayName(dialect);
    const recordHarness = () => ledger.update(run.id, { harness: { ...harness } }).catch(report);
    const started = recordHarness();
    const steps: HarnessSteps = createHarnessSteps({ recorder, redact });
    const stderr = createStderrTail();
    program.child.stderr.setEncoding('utf8').on('data', (chunk: string) => stderr.add(chunk));
    program.child.stdin.on('error', () => {});
    for (const line of context.invocation.input ?? []) program.child.stdin.write(`${line}\n`);
    if (!context.invocation.interactive) program.child.stdin.end();

    // Each result reports its own query's totals: a later query's go on from the earlier's.
    let base: Usage = { ...context.base };
    let result: Extract<HarnessEvent, { type: 'result' }> | undefined;
    let garbage: string | undefined;
    let failure: ExecutionOutcome['error'] | undefined;
    let asking = 0;
    let queue: Promise<void> = Promise.resolve();
    let silence: NodeJS.Timeout | undefined;
    const end = (error: NonNullable<ExecutionOutcome['error']>) => {
      failure ??= error;
      void program.kill();
    };
    // The program waits for its model while no call of its own and no ask is under way: then it must
    // say something within the model's timeout.
    const watchSilence = () => {
      clearTimeout(silence);
      if (asking > 0 || steps.callsUnderWay > 0 || result !== undefined) return;
      silence = setTimeout(
        () => end({ kind: 'execution_error', message: `${name} printed nothing for ${modelTimeoutMs} ms while waiting for its model; it was stopped.` }),
        modelTimeoutMs,
      );
    };
    // A program that takes input while it works gets the messages sent meanwhile as its next user
    // message (one for those that wait together) when its turn ends, in the same process and session.
    const takesMessages = context.invocation.interactive && dialect.message !== undefined && messages !== undefined;
    // Whether its stdin is open for messages: until a turn ends with none waiting. (Claude Code
    // drops a user message it read mid-turn once its stdin closes, and one written mid-turn kept
    // it from ending its turn when tried: a message goes in as a turn ends.)
    let open = takesMessages;
    let unanswered = 1;
    const deliver = async (): Promise<boolean> => {
      if (!open || signal.aborted || !messages!.waiting()) return false;
      const taken = await messages!.take();
      if (taken.length === 0) return false;
      program.child.stdin.write(`${dialect.message!(messagesPrompt(taken))}\n`);
      unanswered++;
      result = undefined;
      return true;
    };
    const stop = () => void program.kill();
    signal.addEventListener('abort', stop, { once: true });
    if (signal.aborted) stop();
    watchSilence();

    async function handle(event: HarnessEvent): Promise<void> {
      switch (event.type) {
        case 'session':
          if (harness.session_id !== event.id) {
            harness.session_id = event.id;
            await recordHarness();
          }
          return;
        case 'text':
        case 'tool-call':
        case 'tool-result':
          return steps.take(event);
        case 'usage': {
          const { type: _type, ...reported } = event;
          recorder.reportUsage(base, reported);
          options.budget?.track(run.id, recorder.usage);
          const spent = await options.budget?.exceeded(recorder.live, recorder.usage);
          if (spent) end({ kind: 'budget_exceeded', message: spent });
          return;
        }
        case 'result':
          result = event;
          base = { ...recorder.usage };
          // A message that waits as its turn ends is its next turn; else a program that keeps
          // stdin open for messages ends once it closes.
          unanswered--;
          if (context.invocation.interactive && unanswered <= 0 && !(await deliver())) {
            open = false;
            program.child.stdin.end();
          }
          return;
        case 'ask': {
          asking++;
          clearTimeout(silence);
          const decision = await (
            options.approve?.({
              run: recorder.live,
              agent,
              tool: dialect.toolName(event.tool),
              programTool: event.tool,
              input: event.input,
              signal,
              live,
            }) ?? Promise.resolve({ allow: false, message: 'cadre has no approvals for this run.' })
          ).catch((error: unknown) => ({
            allow: false,
            message: error instanceof Error ? error.message : String(error),
          }));
          asking--;
          if (dialect.answer && !signal.aborted) program.child.stdin.write(`${dialect.answer(event, decision)}\n`);
          return;
        }
      }
    }

    const parse = dialect.createParser();
    const lines = createInterface({ input: program.child.stdout, crlfDelay: Infinity });
    const linesClosed = new Promise<void>((resolve) => lines.once('close', resolve));
    lines.on('line', (line) => {
      watchSilence();
      const trimmed = line.trim();
      if (trimmed === '') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(trimmed);
      } catch {
        garbage ??= trimmed.slice(0, 200);
        return;
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        garbage ??= trimmed.slice(0, 200);
        return;
      }
      const events = parse(parsed as Record<string, unknown>);
      queue = queue.then(async () => {
        for (const event of events) await handle(event).catch(report);
        watchSilence();
      });
    });
    const exit = await program.exited;
    open = false;
    clearTimeout(silence);
    signal.removeEventListener('abort', stop);
    await linesClosed;
    await queue;
    await steps.close();
    await started;
    // The program is gone: its pid means nothing any more.
    harness.pid = null;
    await recordHarness();

    const stepCount = context.turns + steps.count;
    if (signal.aborted) return stoppedOutcome(run, steps.lastText, stepCount - run.turns);
    if (failure) return { text: '', lastText: steps.lastText, finishReason: 'error', steps: stepCount, error: failure };
    const tail = stderr.lines().map(redact);
    const said = tail.length === 0 ? '' : ` Its last error output: ${tail.join(' | ')}`;
    if (result?.maxTurns) return { text: '', lastText: steps.lastText, finishReason: 'tool-calls', steps: Math.max(stepCount, run.max_turns) };
    if (result?.error !== undefined) {
      return {
        text: '',
        lastText: steps.lastText,
        finishReason: 'error',
        steps: stepCount,
        error: { kind: 'execution_error', message: `${name} reported an error: ${redact(result.error)}.${said}` },
      };
    }
    if (exit.code !== 0) {
      const how = exit.code === null ? `was killed (${exit.signal ?? 'signal'})` : `exited with code ${exit.code}`;
      return {
        text: '',
        lastText: steps.lastText,
        finishReason: 'error',
        steps: stepCount,
        error: { kind: 'execution_error', message: `${name} ${how}.${said}` },
      };
    }
    if (result === undefined) {
      const what =
        garbage === undefined
          ? 'ended without a result'
          : `printed output that is not its JSON events (${JSON.stringify(redact(garbage))}) and ended without a result`;
      return {
        text: '',
        lastText: steps.lastText,
        finishReason: 'error',
        steps: stepCount,
        error: { kind: 'execution_error', message: `${name} ${what}.${said}` },
      };
    }
    const text = result.text.trim() === '' ? steps.lastText : redact(result.text);
    if (run.output_schema) return shapedOutcome(run.output_schema, text, steps.lastText, stepCount, name);
    return { text, lastText: steps.lastText, finishReason: 'stop', steps: stepCount };
  }
}

/**
 * The outcome of a run with an `output_schema` (docs/structured-output.md): the program's final
 * text must be JSON alone that the schema accepts (Codex is given the schema with
 * `--output-schema`; the others have what their task says). A program's invocation is not repaired: a missing or invalid value
 * ends the run `invalid_output`, its text kept as the partial result.
 */
function shapedOutcome(schema: Record<string, unknown>, text: string, lastText: string, steps: number, name: string): ExecutionOutcome {
  let value: unknown;
  try {
    value = JSON.parse(text.trim());
  } catch {
    return {
      text: '',
      lastText: text || lastText,
      finishReason: 'stop',
      steps,
      error: { kind: 'invalid_output', message: `${name}'s final message is not JSON alone, as output_schema needs.` },
    };
  }
  const problems = outputValidator(schema)(value);
  if (problems.length > 0 || typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      text: '',
      lastText: text,
      finishReason: 'stop',
      steps,
      error: { kind: 'invalid_output', message: `${name}'s result does not match output_schema: ${problems.join('; ') || 'it is not an object'}` },
    };
  }
  return { text: jsonText(value), lastText: text, finishReason: 'stop', steps, value: value as Record<string, unknown> };
}

/** The user message a program is given for messages sent to its run: their texts, in the order sent. */
function messagesPrompt(taken: readonly DeliveredMessage[]): string {
  return taken.map((message) => message.text).join('\n\n');
}

/** A stopped run's outcome: the run manager decides its state; its last text is the partial result. */
function stoppedOutcome(run: RunRecord, lastText: string, steps: number): ExecutionOutcome {
  return { text: '', lastText, finishReason: 'stop', steps: run.turns + steps };
}

/** The environment as strings (unset variables left out). */
function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** A journal for steps whose calls were never stored as they started: each step's messages are stored as they are. */
const plainJournal = {
  endStep: async (messages: readonly import('ai').ModelMessage[]) => ({ append: [...messages], rewrite: null }),
  finish: async () => [],
};
