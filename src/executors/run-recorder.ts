import type { ModelMessage } from 'ai';
import { activityEventData, lastSentence, renderActivity, toolActivity, type RunActivity } from '../runs/activity.ts';
import type { RunBus } from '../runs/run-bus.ts';
import type { RecordedEvent, RunLedger } from '../runs/run-ledger.ts';
import { addUsage, usageOf, type ReportedUsage } from '../store/add-usage.ts';
import type { MessageRecord, NewMessage, RunEventType, RunRecord, Usage } from '../store/records.ts';
import type { RunPatch, Store } from '../store/store.ts';
import type { Now, NowMs } from '../util/clock.ts';
import { createStepRecorder } from './step-recorder.ts';
import type { ToolCallJournal } from './tool-call-journal.ts';

/** Options of {@link createRunRecorder}. */
export interface RunRecorderOptions {
  run: RunRecord;
  store: Pick<Store, 'appendMessages' | 'updateMessageContent'>;
  ledger: Pick<RunLedger, 'record'>;
  bus: RunBus;
  now: Now;
  nowMs: NowMs;
  /** The journal of the run's tool calls. */
  journal: Pick<ToolCallJournal, 'endStep' | 'finish'>;
  /** The run's signal: once it aborted, activity is no longer written. */
  signal: AbortSignal;
  /** How often at most the run's activity is written to the store. @default 250 */
  activityIntervalMs?: number;
}

/** A finished step as the recorder needs it. */
export interface RecordedStep {
  text: string;
  finishReason: string;
  usage: ReportedUsage;
  messages: readonly ModelMessage[];
}

/**
 * Records a run while an executor carries it out, whatever drives it (cadre's loop, another agent
 * program): its steps in the child session's transcript (a {@link StepRecorder}), its events, its
 * turns and usage, and a throttled activity line, published live at once and stored with the
 * step's rows at the end of the event-loop turn, in the order they happened. Every write is
 * tracked: `close` waits for them and tells the first that failed.
 */
export interface RunRecorder {
  /** The run as it stands now, for live events (the stored record lags by the throttle). */
  readonly live: RunRecord;
  /** The run's usage so far (its own and its summary's). */
  readonly usage: Usage;
  setActivity(activity: RunActivity): void;
  /** Writes the rows held for the end of the event-loop turn now (before an event written straight to the run). */
  writePending(): void;
  /**
   * Appends the message that keeps a step's first tool calls, after the messages of the steps
   * held for the end of the event-loop turn, in one write (the transcript keeps its order); their
   * events and counters keep waiting for that end. Resolves with the message as stored.
   */
  appendCalls(message: NewMessage): Promise<MessageRecord>;
  stepStarted(stepNumber: number): void;
  textDelta(delta: string, textSoFar: string): void;
  toolCall(toolName: string, input: unknown): void;
  toolResult(toolName: string, ok: boolean): void;
  /** Counts the step's turn and usage and holds its rows; resolves once they are held. */
  stepFinished(step: RecordedStep): Promise<void>;
  /** Adds usage made outside the steps (a summary's). */
  addUsage(usage: Usage): void;
  /**
   * Sets the run's usage to totals reported by who carried it out (an agent program counts its
   * own tokens and cost): `base` plus `reported`, stored with the next rows.
   */
  reportUsage(base: Usage, reported: Usage): void;
  /** Answers the calls of a step that never ended (saying a message `interrupted` them), and waits for every write so far. */
  loopEnded(reason?: 'loop-ended' | 'interrupted'): Promise<void>;
  /** The first write that failed, if any. */
  writeError(): unknown;
  /** Writes what is still held and waits for it; nothing is written for the run afterwards. */
  close(): Promise<void>;
}

/** Creates the {@link RunRecorder} of one execution of a run. */
export function createRunRecorder(options: RunRecorderOptions): RunRecorder {
  const { run, ledger, bus, now, nowMs, signal } = options;
  const activityIntervalMs = options.activityIntervalMs ?? 250;
  const steps = createStepRecorder({
    store: options.store,
    sessionId: run.child_session_id,
    journal: options.journal,
    now,
    publish: (messages) => {
      if (bus.heard(run.child_session_id)) for (const message of messages) bus.publish({ type: 'message', message });
    },
  });
  let turns = run.turns;
  const usage: Usage = { ...run.usage };
  let activity = run.activity;
  /** The line of `activity`, which a change must alter to be shown. */
  let activityText = run.last_activity ?? '';
  let writtenActivity = activity;
  let lastWrite = 0;
  let pending: NodeJS.Timeout | undefined;
  let sentenceAt = 0;
  /** The text the activity line last took its sentence from. */
  let summarized = '';
  let live: RunRecord = run;
  /**
   * Fields that changed while nobody heard the run's events and are not in `live` yet: it is
   * rebuilt with them once read, rather than copied on every change (three times a step).
   */
  let behind: Partial<RunRecord> | undefined;
  /** `live`, brought up to date. */
  const currentLive = () => {
    if (behind !== undefined) {
      live = { ...live, ...behind };
      behind = undefined;
    }
    return live;
  };
  /** Changes `live` (`fields` is the caller's to give away); whether someone hears the run's events, who then got it up to date. */
  const changeLive = (fields: Partial<RunRecord>): boolean => {
    if (bus.heard(run.parent_session_id)) {
      live = { ...live, ...behind, ...fields };
      behind = undefined;
      return true;
    }
    behind = behind === undefined ? fields : Object.assign(behind, fields);
    return false;
  };

  /** Writes not yet settled; the first failure among them, if any. */
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
  let stepPatch: RunPatch | undefined;
  let stepFlush: NodeJS.Immediate | undefined;
  /** Set once the run's outcome is decided: nothing more is written for it here. */
  let closed = false;
  const flushStep = () => {
    clearImmediate(stepFlush);
    stepFlush = undefined;
    const [events, patch] = [stepEvents, stepPatch];
    [stepEvents, stepPatch] = [[], undefined];
    const messages = steps.flush();
    if (messages) track(messages);
    if (events.length > 0 || patch !== undefined) track(ledger.record(currentLive(), events, patch));
  };
  const writePending = () => {
    if (stepFlush !== undefined) flushStep();
  };
  const appendCalls = (message: NewMessage) => {
    const written = steps.flushWith(message);
    track(written);
    return written;
  };
  const queueStepWrite = () => {
    stepFlush ??= setImmediate(flushStep);
  };
  const addEvent = (type: RunEventType, data: Record<string, unknown>, announced = false) => {
    // The run as it stood, for the event's announcement: only when someone hears it (else the ledger's run is used, should someone listen by then).
    stepEvents.push({ type, data, at: now(), run: behind === undefined ? live : undefined, announced });
    queueStepWrite();
  };

  const writeActivity = () => {
    pending = undefined;
    if (activity === writtenActivity || signal.aborted) return;
    writtenActivity = activity;
    lastWrite = nowMs();
    // With the step's rows, so the stored events keep the order they happened in; published
    // live in setActivity already.
    stepPatch = { ...stepPatch, activity };
    if (activity !== null) addEvent('activity', activityEventData(activity), true);
  };
  const setActivity = (next: RunActivity, text = renderActivity(next)) => {
    if (closed) return;
    if (text === '' || text === activityText) return;
    activity = next;
    activityText = text;
    if (changeLive({ activity: next, last_activity: text })) {
      bus.publish({ type: 'run-event', run: live, event: { type: 'activity', at: now(), data: activityEventData(next) } });
    }
    const wait = activityIntervalMs - (nowMs() - lastWrite);
    if (wait <= 0) writeActivity();
    else pending ??= setTimeout(writeActivity, wait);
  };

  return {
    get live() {
      return currentLive();
    },
    usage,
    setActivity: (next) => setActivity(next),
    writePending,
    appendCalls,
    stepStarted(stepNumber) {
      addEvent('step-start', { step: turns + 1 });
      if (stepNumber > 0 || activity === null || activity.kind === 'queued' || activity.kind === 'waiting_for_slot') setActivity(waitingForModel);
    },
    textDelta(delta, textSoFar) {
      bus.publish({ type: 'text-delta', session_id: run.child_session_id, text: delta });
      // The line shows at most 80 characters of the text's end: look at its tail, and not
      // on every delta (a long answer arrives in hundreds of them).
      const at = nowMs();
      if (at - sentenceAt < sentenceIntervalMs && delta !== textSoFar) return;
      sentenceAt = at;
      // A word still arriving is left out until it is whole.
      const whole = delta === textSoFar || /\s$/.test(textSoFar) ? textSoFar : textSoFar.replace(/\S+$/, '');
      summarized = whole;
      setActivity({ kind: 'text', text: lastSentence(whole.slice(-sentenceWindow)) });
    },
    toolCall(toolName, input) {
      const call = toolActivity(toolName, input);
      const label = renderActivity(call);
      addEvent('tool-call-start', { tool: toolName, label });
      // An ask for approval may have been shown before the call's stream part got here.
      if (activity?.kind !== 'awaiting_approval') setActivity(call, label);
    },
    toolResult(toolName, ok) {
      addEvent('tool-call-end', { tool: toolName, ok });
    },
    async stepFinished(step) {
      // The throttle may have skipped the answer's end (or cut its last word).
      if (step.finishReason !== 'tool-calls' && step.text !== summarized && step.text.trim() !== '')
        setActivity({ kind: 'text', text: lastSentence(step.text.slice(-sentenceWindow)) });
      turns++;
      addUsage(usage, usageOf(step.usage));
      changeLive({ turns, usage: { ...usage } });
      // The loop goes on without waiting for the step's rows (the run's end waits for all of
      // them, and fails if one was refused).
      await steps.endStep(step.messages);
      stepPatch = { ...stepPatch, turns, usage: { ...usage } };
      queueStepWrite();
    },
    addUsage(more) {
      addUsage(usage, more);
    },
    reportUsage(base, reported) {
      for (const key of usageKeys) {
        const total = (base[key] ?? 0) + (reported[key] ?? 0);
        if (base[key] !== undefined || reported[key] !== undefined) usage[key] = total;
      }
      changeLive({ usage: { ...usage } });
      stepPatch = { ...stepPatch, usage: { ...usage } };
      queueStepWrite();
    },
    async loopEnded(reason) {
      writePending();
      // A step that never ended (stopped, failed, interrupted) still answers every call it stored.
      track(steps.finish(reason));
      clearTimeout(pending);
      await Promise.allSettled(unsettled);
    },
    writeError() {
      return writeError;
    },
    async close() {
      // Rows queued since (the summary's activity) are stored before the run's end; after it,
      // nothing this run's loop does is written (a late change would land after the end).
      closed = true;
      clearTimeout(pending);
      writePending();
      await Promise.allSettled(unsettled);
    },
  };
}

const usageKeys = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cost_usd'] as const satisfies ReadonlyArray<keyof Usage>;

const waitingForModel: RunActivity = { kind: 'waiting_for_model' };

/** How often at most the activity line follows streamed text. */
const sentenceIntervalMs = 100;
/** Enough of the text's end to find its last sentence as the (≤ 80 characters) line shows it. */
const sentenceWindow = 240;
