import type { AgentLoopResult } from '../loop/agent-loop.ts';
import { createOutputCapture, finalResultToolName } from '../output/output-capture.ts';
import type { OutputSchema } from '../output/output-schema.ts';
import type { RunBus } from '../runs/run-bus.ts';
import type { ExecutionOutcome } from '../runs/run-executor.ts';
import type { RunRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';
import type { RunRecorder } from './run-recorder.ts';
import type { RunSetup } from './run-setup.ts';

/** What one attempt of a structured run needs from the executor's loop. */
export interface StructuredAttempt {
  /** True once the attempt should end after its current step (the final tool was called). */
  stopAfterStep: () => boolean;
  /** Whether the transcript must be read again (an attempt after a repair message). */
  fresh: boolean;
}

/** Options of {@link giveStructuredOutput}. */
export interface StructuredOutputOptions {
  run: RunRecord;
  schema: OutputSchema;
  setup: RunSetup;
  /** `limits.maxOutputRepairs`. */
  maxRepairs: number;
  store: Pick<Store, 'appendMessages'>;
  bus: RunBus;
  now: Now;
  recorder: Pick<RunRecorder, 'live' | 'loopEnded'>;
  /** Runs the subagent's loop once with these tools. */
  attempt: (setup: RunSetup, attempt: StructuredAttempt) => Promise<{ result: AgentLoopResult; budgetMessage: string | null }>;
  /** The outcome of an attempt's loop as a run without a schema would have it (errors, budget, stored steps). */
  outcomeOf: (result: AgentLoopResult, budgetMessage: string | null) => Promise<ExecutionOutcome>;
}

/**
 * Carries out a run whose result must match an output schema (docs/structured-output.md): the
 * subagent gets the tool `final_result` (input schema = the output schema) and may also answer
 * with the JSON value alone. An attempt ends when the subagent calls the tool or stops; a missing
 * or invalid value goes back to it as a user message saying what is wrong (stored in its
 * transcript, so a resumed run reads it too), at most `maxRepairs` times. Then the run fails
 * `invalid_output`, its last text kept; a valid value becomes the outcome's `value`, its JSON the text.
 */
export async function giveStructuredOutput(options: StructuredOutputOptions): Promise<ExecutionOutcome> {
  const { run, recorder } = options;
  const capture = createOutputCapture(options.schema);
  // A run resumed after its process died may have given its value already: no model call then.
  const given = capture.givenIn(await (options.setup.history ?? Promise.resolve([])));
  if (given) return { text: given.text, lastText: '', finishReason: 'stop', steps: run.turns, value: given.value };
  const setup: RunSetup = { ...options.setup, tools: { ...options.setup.tools, [finalResultToolName]: capture.tool } };
  for (let repairs = 0; ; repairs++) {
    const { result, budgetMessage } = await options.attempt(setup, { stopAfterStep: capture.called, fresh: repairs > 0 });
    await recorder.loopEnded();
    const outcome = { ...(await options.outcomeOf(result, budgetMessage)), steps: recorder.live.turns };
    if (outcome.error || result.aborted) return outcome;
    const verdict = capture.judge(result.text, result.lastText);
    if (verdict.ok) return { ...outcome, text: verdict.text, value: verdict.value };
    const turnsLeft = run.max_turns - recorder.live.turns;
    if (turnsLeft <= 0 && result.finishReason === 'tool-calls' && !capture.called()) {
      return { ...outcome, text: '', error: { kind: 'max_turns', message: `The subagent used all ${run.max_turns} turns without giving its result.` } };
    }
    if (repairs >= options.maxRepairs || turnsLeft <= 0) {
      const tries = repairs === 0 ? '' : ` (asked again ${repairs === 1 ? 'once' : `${repairs} times`})`;
      return { ...outcome, text: '', lastText: verdict.lastText, error: { kind: 'invalid_output', message: `No valid result${tries}: ${verdict.problem}` } };
    }
    const [message] = await options.store.appendMessages([
      { session_id: run.child_session_id, role: 'user', content: capture.repairMessage(verdict.problem), created_at: options.now() },
    ]);
    if (message) options.bus.publish({ type: 'message', message });
    capture.nextAttempt();
  }
}
