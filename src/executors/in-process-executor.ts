import { AISDKError, type LanguageModel, type ModelMessage, type TelemetryOptions, type ToolSet } from 'ai';
import { runAgentLoop } from '../loop/agent-loop.ts';
import type { ToolMiddleware } from '../loop/tool-pipeline.ts';
import { ModelCallError } from '../models/model-call-error.ts';
import type { SecretRedactor } from '../models/secret-redactor.ts';
import { activityEventData, lastSentence, renderActivity, toolActivity, type RunActivity } from '../runs/activity.ts';
import type { RunBus } from '../runs/run-bus.ts';
import type { RecordedEvent, RunLedger } from '../runs/run-ledger.ts';
import type { TokenBudget } from '../runs/token-budget.ts';
import { shortMessage, type ExecutionOutcome, type RunExecutor } from '../runs/run-manager.ts';
import type { MessageRecord, NewMessage, RunEventType, RunRecord, Usage } from '../store/records.ts';
import type { RunPatch, Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';
import { answerOrphanedCalls } from './answer-orphaned-calls.ts';
import { toModelMessages, toNewMessages } from './message-codec.ts';
import { createToolCallJournal } from './tool-call-journal.ts';
import { reportToDefaultLogger } from '../logging/default-logger.ts';

/** What a run's loop needs, looked up when it starts. */
export interface RunSetup {
  model: LanguageModel;
  instructions: string;
  tools: ToolSet;
  /** The tool pipeline's entries for these tools (input check, permission, redaction, stop). @default none */
  toolMiddleware?: readonly ToolMiddleware[];
  /** Messages that reached the child session while the run works (notifications of its own runs). */
  takeInjectedMessages?: () => ModelMessage[] | Promise<ModelMessage[]>;
  /**
   * The child session's stored messages, read once the setup opened its inbox (with the setup's
   * own reads, in one round trip on a database server). @default read after the setup
   */
  history?: Promise<MessageRecord[]>;
  /** Called once the loop is over, whatever the outcome. */
  finish?: () => Promise<void>;
  /**
   * Summarizes a final text too long for the parent (`summarize.enabled`); resolves null when the
   * text needs none. Its tokens count in the run's usage. @default no summaries
   */
  summarize?: (text: string, signal: AbortSignal) => Promise<RunSummary | null>;
}

/** A summary of a run's result for its parent, or why there is none. */
export interface RunSummary {
  summary: string | null;
  /** Why there is no summary (it failed or took too long). */
  error: string | null;
  usage: Usage;
}

/** What a run's setup can do to the run while it works. */
export interface RunLive {
  /** Shows what the run is doing as its activity (throttled like every activity line). */
  setActivity(activity: RunActivity): void;
  /**
   * Writes the step's events held for the end of the event-loop turn now, so that an event written
   * straight to the run next (an ask for approval) is stored after them, in the order they happened.
   */
  writePending(): void;
}

/** Options of {@link createInProcessExecutor}. */
export interface InProcessExecutorOptions {
  store: Store;
  ledger: RunLedger;
  bus: RunBus;
  now: Now;
  /** This process's identity in leases: tool calls under way name it. */
  ownerId: string;
  /** Lease length, after which calls of a dead process on another host get their results. @default 15000 */
  leaseMs?: number;
  /** Resolves the agent, model and tools of a run; throws a short error when it cannot. */
  setup: (run: RunRecord, signal: AbortSignal, live: RunLive) => RunSetup | Promise<RunSetup>;
  /** How often at most a run's activity is written to the store. @default 250 */
  activityIntervalMs?: number;
  /** Redacts the error a loop ends with (tool results: the setup's `toolMiddleware`). @default nothing is redacted */
  redactor?: SecretRedactor;
  /** The AI SDK's telemetry settings of every loop. @default on only while someone receives it */
  telemetry?: TelemetryOptions;
  /** Whether a run that starts now streams its text (someone watches live). @default always */
  stream?: () => boolean;
  onError?: (error: unknown) => void;
  /** Token budgets, checked before the first model call and after each step. @default none */
  budget?: TokenBudget;
}

/**
 * Executes runs in this process: the subagent's loop over its child session, with every step
 * stored as it ends, events for steps and tool calls, and a throttled activity line.
 */
export function createInProcessExecutor(options: InProcessExecutorOptions): RunExecutor {
  const { store, ledger, bus, now } = options;
  const activityIntervalMs = options.activityIntervalMs ?? 250;
  const report = options.onError ?? reportToDefaultLogger;
  // Without a budget set, steps pay nothing for the feature.
  const budget = options.budget && (options.budget.limits.maxTokensPerRun !== undefined || options.budget.limits.maxTokensPerSession !== undefined) ? options.budget : undefined;

  return {
    async execute(run: RunRecord, signal: AbortSignal): Promise<ExecutionOutcome> {
      // A run whose session spent its budget while it waited (or a recovered run past its own)
      // makes no model call at all.
      const spent = await budget?.exceeded(run, run.usage);
      if (spent) return { text: '', lastText: '', finishReason: 'budget', steps: run.turns, error: { kind: 'budget_exceeded', message: spent } };
      let setup: RunSetup;
      // Tools (an ask for approval) show activity through this, once the line below exists.
      let showActivity = (_activity: RunActivity) => {};
      let writePending = () => {};
      try {
        setup = await options.setup(run, signal, { setActivity: (activity) => showActivity(activity), writePending: () => writePending() });
      } catch (error) {
        return { text: '', lastText: '', finishReason: 'error', steps: 0, error: { kind: 'execution_error', message: shortMessage(error) } };
      }
      let stored = await (setup.history ?? store.listMessages(run.child_session_id));
      // A recovered run's last step may hold calls its dead process never answered: this process
      // holds the run now, and its loop starts below.
      if (await answerOrphanedCalls({ store, sessionId: run.child_session_id, now, leaseMs: options.leaseMs, messages: stored, takenOver: [run.id] })) stored = await store.listMessages(run.child_session_id);
      const history = toModelMessages(stored);
      let turns = run.turns;
      const usage = { ...run.usage };
      let activity = run.activity;
      /** The line of `activity`, which a change must alter to be shown. */
      let activityText = run.last_activity ?? '';
      let writtenActivity = activity;
      let lastWrite = 0;
      let pending: NodeJS.Timeout | undefined;
      let sentenceAt = 0;
      /** The text the activity line last took its sentence from. */
      let summarized = '';
      /** The run as it stands now, for live events (the stored record lags by the throttle). */
      let live: RunRecord = run;
      /** Set when a token budget ended the loop after a step. */
      let budgetMessage: string | null = null;

      /** Step writes not yet settled; the first failure among them, if any. */
      const unsettled = new Set<Promise<unknown>>();
      let writeError: unknown;
      const track = (write: Promise<unknown>) => {
        unsettled.add(write);
        write.then(
          () => unsettled.delete(write),
          (error: unknown) => {
            unsettled.delete(write);
            writeError ??= error;
          },
        );
      };

      // A step's rows (its events, messages and counters) go to the store together at the end of
      // the event-loop turn rather than one call each: the store commits no sooner than that anyway.
      let stepEvents: RecordedEvent[] = [];
      let stepMessages: NewMessage[] = [];
      /** Stored calls' messages to rewrite as their steps' whole assistant messages, after the results. */
      let stepRewrites: MessageRecord[] = [];
      /** Stored calls' messages that already are their steps' whole assistant messages: announced with the step. */
      let stepKept: MessageRecord[] = [];
      let stepPatch: RunPatch | undefined;
      let stepFlush: NodeJS.Immediate | undefined;
      /** Set once the run's outcome is decided: nothing more is written for it here. */
      let closed = false;
      const flushStep = () => {
        clearImmediate(stepFlush);
        stepFlush = undefined;
        const [events, messages, rewrites, kept, patch] = [stepEvents, stepMessages, stepRewrites, stepKept, stepPatch];
        [stepEvents, stepMessages, stepRewrites, stepKept, stepPatch] = [[], [], [], [], undefined];
        if (messages.length > 0 || rewrites.length > 0) {
          track(
            store.appendMessages(messages).then(async (stored) => {
              for (const rewrite of rewrites) await store.updateMessageContent(rewrite.session_id, rewrite.seq, rewrite.content);
              const announced = kept.length + rewrites.length === 0 ? stored : [...kept, ...rewrites, ...stored].sort((a, b) => a.seq - b.seq);
              for (const message of announced) bus.publish({ type: 'message', message });
            }),
          );
        } else for (const message of kept) bus.publish({ type: 'message', message });
        if (events.length > 0 || patch !== undefined) track(ledger.record(live, events, patch));
      };
      writePending = () => {
        if (stepFlush !== undefined) flushStep();
      };
      const queueStepWrite = () => {
        stepFlush ??= setImmediate(flushStep);
      };
      const addEvent = (type: RunEventType, data: Record<string, unknown>, announced = false) => {
        stepEvents.push({ type, data, at: now(), run: live, announced });
        queueStepWrite();
      };

      const writeActivity = () => {
        pending = undefined;
        if (activity === writtenActivity || signal.aborted) return;
        writtenActivity = activity;
        lastWrite = Date.now();
        // With the step's rows, so the stored events keep the order they happened in; published
        // live in setActivity already.
        stepPatch = { ...stepPatch, activity };
        if (activity !== null) addEvent('activity', activityEventData(activity), true);
      };
      const setActivity = (next: RunActivity) => {
        if (closed) return;
        const text = renderActivity(next);
        if (text === '' || text === activityText) return;
        activity = next;
        activityText = text;
        live = { ...live, activity: next, last_activity: text };
        bus.publish({ type: 'run-event', run: live, event: { type: 'activity', at: now(), data: activityEventData(next) } });
        const wait = activityIntervalMs - (Date.now() - lastWrite);
        if (wait <= 0) writeActivity();
        else pending ??= setTimeout(writeActivity, wait);
      };
      showActivity = setActivity;

      // Each call is stored before it runs, after the rows of earlier steps still held. Unmarked:
      // the run's lease says who runs them.
      const journal = createToolCallJournal({ store, sessionId: run.child_session_id, ownerId: options.ownerId, markCalls: false, now, beforeRecord: () => writePending() });
      const result = await runAgentLoop({
        model: setup.model,
        instructions: setup.instructions,
        messages: history,
        tools: setup.tools,
        toolMiddleware: setup.toolMiddleware,
        maxTurns: Math.max(1, run.max_turns - run.turns),
        abortSignal: signal,
        redactor: options.redactor,
        telemetry: options.telemetry,
        stream: options.stream?.() ?? true,
        takeInjectedMessages: setup.takeInjectedMessages,
        toolCalls: journal,
        shouldStop: budget
          ? async () => {
              budgetMessage = await budget.exceeded(live, usage);
              return budgetMessage !== null;
            }
          : undefined,
        onStepStart: (stepNumber) => {
          addEvent('step-start', { step: turns + 1 });
          if (stepNumber > 0 || activity === null || activity.kind === 'queued' || activity.kind === 'waiting_for_slot') setActivity(waitingForModel);
        },
        onTextDelta: (delta, textSoFar) => {
          bus.publish({ type: 'text-delta', session_id: run.child_session_id, text: delta });
          // The line shows at most 80 characters of the text's end: look at its tail, and not
          // on every delta (a long answer arrives in hundreds of them).
          const at = Date.now();
          if (at - sentenceAt < sentenceIntervalMs && delta !== textSoFar) return;
          sentenceAt = at;
          // A word still arriving is left out until it is whole.
          const whole = delta === textSoFar || /\s$/.test(textSoFar) ? textSoFar : textSoFar.replace(/\S+$/, '');
          summarized = whole;
          setActivity({ kind: 'text', text: lastSentence(whole.slice(-sentenceWindow)) });
        },
        onToolCall: ({ toolName, input }) => {
          const call = toolActivity(toolName, input);
          addEvent('tool-call-start', { tool: toolName, label: renderActivity(call) });
          // An ask for approval may have been shown before the call's stream part got here.
          if (activity?.kind !== 'awaiting_approval') setActivity(call);
        },
        onToolResult: ({ toolName, ok }) => {
          addEvent('tool-call-end', { tool: toolName, ok });
        },
        onStepFinish: async (step) => {
          // The throttle may have skipped the answer's end (or cut its last word).
          if (step.finishReason !== 'tool-calls' && step.text !== summarized && step.text.trim() !== '') setActivity({ kind: 'text', text: lastSentence(step.text.slice(-sentenceWindow)) });
          turns++;
          usage.input_tokens += step.usage.inputTokens;
          usage.output_tokens += step.usage.outputTokens;
          live = { ...live, turns, usage: { ...usage } };
          budget?.track(run.id, usage);
          // The loop goes on without waiting for the step's rows (the run's end waits for all of
          // them below, and fails if one was refused).
          const { append, rewrite, kept } = await journal.endStep(step.messages);
          stepMessages.push(...toNewMessages(run.child_session_id, append, now()));
          if (rewrite) stepRewrites.push(rewrite);
          else if (kept) stepKept.push(kept);
          stepPatch = { ...stepPatch, turns, usage: { ...usage } };
          queueStepWrite();
        },
      });
      if (stepFlush !== undefined) flushStep();
      // A step that never ended (stopped, failed) still answers every call it stored.
      track(
        journal.finish().then((finished) => {
          for (const message of finished) bus.publish({ type: 'message', message });
        }),
      );
      clearTimeout(pending);
      await Promise.allSettled(unsettled);
      budget?.release(run.id);
      await setup.finish?.().catch(report);

      const outcome: ExecutionOutcome = { text: result.text, lastText: result.lastText, finishReason: result.finishReason, steps: run.turns + result.steps };
      if (result.error !== undefined) {
        outcome.error = { kind: isModelError(result.error) ? 'model_error' : 'execution_error', message: shortMessage(result.error) };
      } else if (budgetMessage !== null && !result.aborted) {
        outcome.error = { kind: 'budget_exceeded', message: budgetMessage };
      } else if (writeError !== undefined) {
        outcome.error = { kind: 'execution_error', message: `A step could not be stored: ${shortMessage(writeError)}` };
      } else if (setup.summarize && !result.aborted && result.text.trim() !== '') {
        const summary = await setup.summarize(result.text, signal).catch((error: unknown): RunSummary => ({ summary: null, error: shortMessage(error), usage: { input_tokens: 0, output_tokens: 0 } }));
        if (summary) {
          outcome.summary = { summary: summary.summary, error: summary.error };
          usage.input_tokens += summary.usage.input_tokens;
          usage.output_tokens += summary.usage.output_tokens;
          const data = summary.summary === null ? { original_length: result.text.length, summary_length: 0, error: summary.error } : { original_length: result.text.length, summary_length: summary.summary.length };
          await ledger.update(run.id, { usage: { ...usage } }, { type: 'summary', data }).catch(report);
        }
      }
      // Rows queued since (the summary's activity) are stored before the run's end; after it,
      // nothing this run's loop does is written (a late change would land after the end).
      closed = true;
      clearTimeout(pending);
      if (stepFlush !== undefined) flushStep();
      await Promise.allSettled(unsettled);
      return outcome;
    },
  };
}

const waitingForModel: RunActivity = { kind: 'waiting_for_model' };

/** How often at most the activity line follows streamed text. */
const sentenceIntervalMs = 100;
/** Enough of the text's end to find its last sentence as the (≤ 80 characters) line shows it. */
const sentenceWindow = 240;

/**
 * Whether a loop error came from the model or the SDK's handling of its answer (HTTP, retries,
 * bad responses, a call of a tool that does not exist): the AI SDK's own error classes, checked
 * with their `isInstance` (which survives duplicate package copies), and cadre's model errors.
 */
function isModelError(error: unknown): boolean {
  return AISDKError.isInstance(error) || ModelCallError.isInstance(error);
}
