import { AISDKError, type ModelMessage } from 'ai';
import { reportToDefaultLogger } from '../logging/default-logger.ts';
import { runAgentLoop, type AgentLoopResult } from '../loop/agent-loop.ts';
import { ModelCallError } from '../models/model-call-error.ts';
import { failedOutcome, shortMessage, type ExecutionContext, type ExecutionOutcome, type RunExecutor, type RunMessageFeed } from '../runs/run-executor.ts';
import { RunInterruptSignal } from '../runs/run-stop.ts';
import type { RunLedger } from '../runs/run-ledger.ts';
import type { TokenBudget } from '../runs/token-budget.ts';
import type { RunRecord } from '../store/records.ts';
import { systemNowMs } from '../util/clock.ts';
import { answerOrphanedCalls } from './answer-orphaned-calls.ts';
import { toModelMessages } from './message-codec.ts';
import { createRunRecorder, type RunRecorder } from './run-recorder.ts';
import type { RunSetup, RunSummary, SetUpRun } from './run-setup.ts';
import { createToolCallJournal, type ToolCallJournal } from './tool-call-journal.ts';
import type { LoopContext } from './loop-context.ts';
import { giveStructuredOutput, type StructuredAttempt } from './structured-output.ts';

export type { RunLive, RunSetup, RunSummary } from './run-setup.ts';

/** Options of {@link createInProcessExecutor}: the runtime's {@link LoopContext}, and what runs need besides. */
export interface InProcessExecutorOptions extends LoopContext {
  ledger: RunLedger;
  /** Resolves the agent, model and tools of a run; throws a short error when it cannot. */
  setup: SetUpRun;
  /** How often at most a run's activity is written to the store. @default 250 */
  activityIntervalMs?: number;
  /** Token budgets, checked before the first model call and after each step. @default none */
  budget?: TokenBudget;
  /** Times a missing or invalid structured value goes back to the subagent (`limits.maxOutputRepairs`). @default 2 */
  maxOutputRepairs?: number;
}

/**
 * Executes runs in this process: the subagent's loop over its child session, recorded by a
 * {@link RunRecorder} (every step stored as it ends, events for steps and tool calls, a throttled
 * activity line).
 */
export function createInProcessExecutor(options: InProcessExecutorOptions): RunExecutor {
  const { store, ledger, bus, now } = options;
  const nowMs = options.nowMs ?? systemNowMs;
  const report = options.onError ?? reportToDefaultLogger;
  // Without a budget set, steps pay nothing for the feature.
  const budget =
    options.budget && (options.budget.limits.maxTokensPerRun !== undefined || options.budget.limits.maxTokensPerSession !== undefined)
      ? options.budget
      : undefined;

  /** The run's loop, from its stored transcript, recorded as it goes. */
  async function loop(
    run: RunRecord,
    signal: AbortSignal,
    setup: RunSetup,
    recorder: RunRecorder,
    journal: ToolCallJournal,
    structured?: StructuredAttempt,
    messages?: RunMessageFeed,
  ) {
    // An attempt after a repair message reads the transcript as it stands now.
    let stored = await (structured?.fresh ? store.listMessages(run.child_session_id) : (setup.history ?? store.listMessages(run.child_session_id)));
    // A recovered run's last step may hold calls its dead process never answered: this process
    // holds the run now, and its loop starts below.
    if (await answerOrphanedCalls({ store, sessionId: run.child_session_id, now, leaseMs: options.leaseMs, messages: stored, takenOver: [run.id] }))
      stored = await store.listMessages(run.child_session_id);
    /** Set when a token budget ended the loop after a step. */
    let budgetMessage: string | null = null;
    const result = await runAgentLoop({
      model: setup.model,
      instructions: setup.instructions,
      messages: toModelMessages(stored),
      tools: setup.tools,
      toolMiddleware: setup.toolMiddleware,
      maxTurns: Math.max(1, run.max_turns - recorder.live.turns),
      abortSignal: signal,
      redactor: options.redactor,
      telemetry: options.telemetry,
      stream: options.stream?.() ?? true,
      takeInjectedMessages: withRunMessages(setup.takeInjectedMessages, messages),
      toolCalls: journal,
      shouldStop: stopCondition(
        structured?.stopAfterStep,
        budget
          ? async () => {
              budgetMessage = await budget.exceeded(recorder.live, recorder.usage);
              return budgetMessage !== null;
            }
          : undefined,
      ),
      onStepStart: (stepNumber) => recorder.stepStarted(stepNumber),
      onTextDelta: (delta, textSoFar) => recorder.textDelta(delta, textSoFar),
      onToolCall: ({ toolName, input }) => recorder.toolCall(toolName, input),
      onToolResult: ({ toolName, ok }) => recorder.toolResult(toolName, ok),
      onStepFinish: async (step) => {
        const held = recorder.stepFinished(step);
        budget?.track(run.id, recorder.usage);
        await held;
      },
    });
    return { result, budgetMessage: budgetMessage as string | null };
  }

  /** The outcome of a loop that ended, its summary made when the text is too long for the parent. */
  async function outcomeOf(
    run: RunRecord,
    signal: AbortSignal,
    setup: RunSetup,
    recorder: RunRecorder,
    result: AgentLoopResult,
    budgetMessage: string | null,
    structured = false,
  ): Promise<ExecutionOutcome> {
    const outcome: ExecutionOutcome = { text: result.text, lastText: result.lastText, finishReason: result.finishReason, steps: run.turns + result.steps };
    const writeError = recorder.writeError();
    if (result.error !== undefined) {
      outcome.error = { kind: isModelError(result.error) ? 'model_error' : 'execution_error', message: shortMessage(result.error) };
    } else if (budgetMessage !== null && !result.aborted) {
      outcome.error = { kind: 'budget_exceeded', message: budgetMessage };
    } else if (writeError !== undefined) {
      outcome.error = { kind: 'execution_error', message: `A step could not be stored: ${shortMessage(writeError)}` };
    } else if (setup.summarize && !structured && !result.aborted && result.text.trim() !== '') {
      const summary = await setup
        .summarize(result.text, signal)
        .catch((error: unknown): RunSummary => ({ summary: null, error: shortMessage(error), usage: { input_tokens: 0, output_tokens: 0 } }));
      if (summary) {
        outcome.summary = { summary: summary.summary, error: summary.error };
        recorder.addUsage(summary.usage);
        const data =
          summary.summary === null
            ? { original_length: result.text.length, summary_length: 0, error: summary.error }
            : { original_length: result.text.length, summary_length: summary.summary.length };
        await ledger.update(run.id, { usage: { ...recorder.usage } }, { type: 'summary', data }).catch(report);
      }
    }
    return outcome;
  }

  return {
    async execute(run: RunRecord, signal: AbortSignal, context?: ExecutionContext): Promise<ExecutionOutcome> {
      const messages = context?.messages;
      // A run whose session spent its budget while it waited (or a recovered run past its own)
      // makes no model call at all.
      const spent = await budget?.exceeded(run, run.usage);
      if (spent) return { text: '', lastText: '', finishReason: 'budget', steps: run.turns, error: { kind: 'budget_exceeded', message: spent } };
      // Each call is stored before it runs, appended with the messages of earlier steps still held
      // (their events and counters follow at the end of the event-loop turn, as ever). Unmarked:
      // the run's lease says who runs them.
      const journal = createToolCallJournal({
        store,
        sessionId: run.child_session_id,
        ownerId: options.ownerId,
        markCalls: false,
        now,
        appendCalls: (message) => recorder.appendCalls(message),
      });
      const recorder = createRunRecorder({ run, store, ledger, bus, now, nowMs, journal, signal, activityIntervalMs: options.activityIntervalMs });
      let setup: RunSetup;
      try {
        setup = await options.setup(
          run,
          signal,
          { setActivity: (activity) => recorder.setActivity(activity), writePending: () => recorder.writePending() },
          context?.place,
        );
      } catch (error) {
        return failedOutcome(error);
      }
      if (run.output_schema) {
        const outcome = await giveStructuredOutput({
          run,
          schema: run.output_schema,
          setup,
          maxRepairs: options.maxOutputRepairs ?? 2,
          now,
          store,
          bus,
          recorder,
          attempt: (attemptSetup, attempt) => loop(run, signal, attemptSetup, recorder, journal, attempt, messages),
          outcomeOf: (result, budgetMessage) => outcomeOf(run, signal, setup, recorder, result, budgetMessage, true),
        }).catch((error: unknown) => failedOutcome(error, recorder.live.turns));
        budget?.release(run.id);
        await setup.finish?.().catch(report);
        await recorder.close();
        return outcome;
      }
      const { result, budgetMessage } = await loop(run, signal, setup, recorder, journal, undefined, messages);
      await recorder.loopEnded(RunInterruptSignal.isInstance(signal.reason) ? 'interrupted' : 'loop-ended');
      budget?.release(run.id);
      await setup.finish?.().catch(report);
      const outcome = await outcomeOf(run, signal, setup, recorder, result, budgetMessage);
      await recorder.close();
      return outcome;
    },
  };
}

/** The loop's stop condition: the end of a structured attempt, a spent budget, either, or none. */
function stopCondition(
  attemptOver: (() => boolean) | undefined,
  budgetSpent: (() => Promise<boolean>) | undefined,
): (() => boolean | Promise<boolean>) | undefined {
  if (!attemptOver) return budgetSpent;
  if (!budgetSpent) return attemptOver;
  return () => attemptOver() || budgetSpent();
}

/**
 * The messages a run's loop takes before each model call: notifications of its own runs, then the
 * messages its parent or a person sent it (each stored in the transcript as it is delivered). A step
 * with neither waiting pays nothing.
 */
function withRunMessages(notifications: RunSetup['takeInjectedMessages'], messages: RunMessageFeed | undefined): RunSetup['takeInjectedMessages'] {
  if (!messages) return notifications;
  return () => {
    const taken = notifications?.() ?? [];
    if (!messages.waiting()) return taken;
    return Promise.resolve(taken).then(async (before) => {
      const delivered = await messages.take();
      return [...before, ...delivered.map((message): ModelMessage => ({ role: 'user', content: message.text }))];
    });
  };
}

/**
 * Whether a loop error came from the model or the SDK's handling of its answer (HTTP, retries,
 * bad responses, a call of a tool that does not exist): the AI SDK's own error classes, checked
 * with their `isInstance` (which survives duplicate package copies), and cadre's model errors.
 */
function isModelError(error: unknown): boolean {
  return AISDKError.isInstance(error) || ModelCallError.isInstance(error);
}
