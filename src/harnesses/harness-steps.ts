import type { ModelMessage } from 'ai';
import type { RunRecorder } from '../executors/run-recorder.ts';
import type { HarnessEvent } from './harness-dialect.ts';

/** The longest tool output kept in the transcript; the program keeps its own whole. */
const maxToolOutputChars = 20_000;

/** Options of {@link createHarnessSteps}. */
export interface HarnessStepsOptions {
  recorder: RunRecorder;
  /** Redacts a tool's output and text before it is stored. */
  redact: (text: string) => string;
}

/**
 * Turns a program's events into the run's steps, as cadre's own loop records them: one step per
 * model call (its text and tool calls, then the results of those calls), so the transcript,
 * `agent_output` with `detail: transcript`, the activity line and the events read as for any run.
 * A step ends when the model speaks again after results came back, or at the end.
 */
export interface HarnessSteps {
  /** Takes one event of the program (text, tool calls and results). */
  take(event: Extract<HarnessEvent, { type: 'text' | 'tool-call' | 'tool-result' }>): Promise<void>;
  /** Ends the open step; calls left without a result get one saying the run ended first. */
  close(): Promise<void>;
  /** The last text the program said (the partial result of a stopped run). */
  readonly lastText: string;
  /** Steps recorded by this invocation. */
  readonly count: number;
  /** Tool calls without a result yet (the model is not what the program waits for then). */
  readonly callsUnderWay: number;
}

interface OpenStep {
  text: string;
  parts: Array<Record<string, unknown>>;
  results: Array<Record<string, unknown>>;
}

/** Creates the {@link HarnessSteps} of one invocation of a program. */
export function createHarnessSteps(options: HarnessStepsOptions): HarnessSteps {
  const { recorder, redact } = options;
  let step: OpenStep | null = null;
  let count = 0;
  let lastText = '';
  const calls = new Map<string, string>();
  let answered = new Set<string>();
  // Steps are recorded in order even when events arrive faster than a step's rows are held.
  let closing: Promise<void> = Promise.resolve();

  function closeStep(): Promise<void> {
    const ended = step;
    step = null;
    if (ended === null) return closing;
    const unanswered = ended.parts.filter((part) => part.type === 'tool-call' && !answered.has(String(part.toolCallId)));
    for (const call of unanswered) {
      ended.results.push(toolResult(String(call.toolCallId), String(call.toolName), 'The run ended before this call finished.', false));
      calls.delete(String(call.toolCallId));
    }
    const messages: ModelMessage[] = [{ role: 'assistant', content: ended.parts } as ModelMessage];
    if (ended.results.length > 0) messages.push({ role: 'tool', content: ended.results } as ModelMessage);
    const finishReason = ended.parts.some((part) => part.type === 'tool-call') ? 'tool-calls' : 'stop';
    closing = closing.then(() => recorder.stepFinished({ text: ended.text, finishReason, usage: { inputTokens: 0, outputTokens: 0 }, messages }));
    return closing;
  }

  async function openStep(): Promise<OpenStep> {
    if (step !== null && step.results.length === 0) return step;
    if (step !== null) await closeStep();
    step = { text: '', parts: [], results: [] };
    answered = new Set();
    recorder.stepStarted(count);
    count++;
    return step;
  }

  return {
    async take(event) {
      if (event.type === 'text') {
        const open = await openStep();
        const text = redact(event.text);
        open.text = open.text === '' ? text : `${open.text}\n\n${text}`;
        open.parts.push({ type: 'text', text });
        if (text.trim() !== '') lastText = text;
        recorder.textDelta(text, open.text);
      } else if (event.type === 'tool-call') {
        const open = await openStep();
        open.parts.push({ type: 'tool-call', toolCallId: event.id, toolName: event.name, input: event.input });
        calls.set(event.id, event.name);
        recorder.toolCall(event.name, event.input);
      } else {
        const name = calls.get(event.id);
        if (step === null || name === undefined) return;
        calls.delete(event.id);
        answered.add(event.id);
        const output = redact(event.output.length > maxToolOutputChars ? `${event.output.slice(0, maxToolOutputChars)}\n[cut]` : event.output);
        step.results.push(toolResult(event.id, name, output, event.ok));
        recorder.toolResult(name, event.ok);
      }
    },
    close: closeStep,
    get lastText() {
      return lastText;
    },
    get count() {
      return count;
    },
    get callsUnderWay() {
      return calls.size;
    },
  };
}

function toolResult(toolCallId: string, toolName: string, output: string, ok: boolean): Record<string, unknown> {
  return { type: 'tool-result', toolCallId, toolName, output: { type: ok ? 'text' : 'error-text', value: output } };
}
