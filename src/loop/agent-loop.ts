import { tracingChannel } from 'node:diagnostics_channel';
import * as aiSdk from 'ai';
// Read through the namespace: AI SDK 6 lacks this export, and cadre must still load there to say it needs 7.
const AI_SDK_TELEMETRY_TRACING_CHANNEL = (aiSdk as { AI_SDK_TELEMETRY_TRACING_CHANNEL?: string }).AI_SDK_TELEMETRY_TRACING_CHANNEL ?? 'ai:telemetry';
import {
  generateText,
  stepCountIs,
  streamText,
  type LanguageModel,
  type ModelMessage,
  type PrepareStepFunction,
  type StepResult,
  type TelemetryOptions,
  type ToolSet,
} from 'ai';
import { composeModel } from '../models/compose-model.ts';
import type { SecretRedactor } from '../models/secret-redactor.ts';
import { watchModelText } from '../models/watch-model-text.ts';
import { watchModelUsage } from '../models/watch-model-usage.ts';
import { letEventLoopTurn } from '../util/event-loop-turn.ts';
import { recordToolCalls, type ToolCallRecorder } from './record-tool-calls.ts';
import { composeTools, isPromiseLike, type ToolMiddleware } from './tool-pipeline.ts';
import { watchToolCalls } from './watch-tool-calls.ts';

/** Token counts of one step or a whole loop. */
export interface LoopUsage {
  /** Every input token, cached ones included. */
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those read from the provider's prompt cache, when it reported them. */
  cacheReadTokens?: number;
  /** Of `inputTokens`, those written to the provider's prompt cache, when it reported them. */
  cacheWriteTokens?: number;
}

/** One finished step (one model call and the tool calls it asked for). */
export interface LoopStep {
  stepNumber: number;
  /** The messages this step added: the assistant message and any tool results. */
  messages: ModelMessage[];
  text: string;
  finishReason: string;
  usage: LoopUsage;
}

/** Options of {@link runAgentLoop}. */
export interface AgentLoopOptions {
  model: LanguageModel;
  instructions: string;
  /** The conversation so far, ending with the message to answer. */
  messages: ModelMessage[];
  tools: ToolSet;
  /**
   * The tool pipeline's entries (input check, permission, redaction, stop...), composed once with
   * the loop's own activity watch outermost. @default none
   */
  toolMiddleware?: readonly ToolMiddleware[];
  /** The turn cap: the loop makes at most this many model calls. */
  maxTurns: number;
  abortSignal: AbortSignal;
  /**
   * The AI SDK's own retries. cadre's models retry by themselves (`reliableModel`, one policy for
   * streamed and unstreamed calls), so the SDK's are off. @default 0
   */
  maxRetries?: number;
  /**
   * Redacts the error a loop ends with. (Tool results are redacted by the tool pipeline's
   * redaction entry, `redactToolOutput`, given in `toolMiddleware`.) @default nothing is redacted
   */
  redactor?: Pick<SecretRedactor, 'redactError'>;
  /**
   * The AI SDK's telemetry settings for this loop. By default it is left on while anyone could
   * receive it (an integration registered with `registerTelemetry`, or a subscriber to the SDK's
   * `ai:telemetry` tracing channel) and turned off otherwise: building its events costs 30–40 % of
   * a plain model call with an in-memory model.
   */
  telemetry?: TelemetryOptions;
  /**
   * Stream the model's text (`streamText`, `onTextDelta` per delta) or not (`generateText`,
   * `onTextDelta` once per step with the whole text). Streaming costs far more CPU per step, so
   * callers stream only when someone watches. @default true
   */
  stream?: boolean;
  /**
   * Asked after each step that would lead to another model call (its tool calls ran); true ends
   * the loop there, as the turn cap does (token budgets).
   */
  shouldStop?: () => boolean | PromiseLike<boolean>;
  /** Messages that arrived while the loop ran (notifications), added before the next model call. */
  takeInjectedMessages?: () => ModelMessage[] | Promise<ModelMessage[]>;
  /**
   * Told the tokens of each model response as soon as it is complete, before the step's tool
   * calls run (`onStepFinish` comes after them).
   */
  onModelUsage?: (usage: LoopUsage) => void;
  onStepStart?: (stepNumber: number) => void;
  /** Awaited before the next step, so a step is stored before the loop goes on. */
  onStepFinish?: (step: LoopStep) => Promise<void> | void;
  onTextDelta?: (text: string, textSoFar: string) => void;
  /**
   * Stores each tool call before it runs (and hears how it ended), so a crash mid-step keeps the
   * calls that started work. @default calls are stored only with their step
   */
  toolCalls?: ToolCallRecorder;
  onToolCall?: (call: { toolCallId: string; toolName: string; input: unknown }) => void;
  onToolResult?: (result: { toolCallId: string; toolName: string; ok: boolean }) => void;
}

/** How a loop ended. */
export interface AgentLoopResult {
  /** The text of the last step. */
  text: string;
  /** The last non-empty assistant text of any step: the partial result if the loop was stopped. */
  lastText: string;
  finishReason: string;
  steps: number;
  usage: LoopUsage;
  /** Set when the model call or the loop failed. */
  error?: unknown;
  aborted: boolean;
}

/**
 * One agent's tool loop on the AI SDK: `streamText` (or `generateText` when `stream` is false)
 * with tools, a step-count stop condition and an abort signal. Each step is handed to
 * `onStepFinish` as it ends (so callers store it), and stream parts or step callbacks feed the
 * callbacks for events and activity. Never throws: errors are returned.
 */
export async function runAgentLoop(options: AgentLoopOptions): Promise<AgentLoopResult> {
  const conversation = [...options.messages];
  const usage: LoopUsage = { inputTokens: 0, outputTokens: 0 };
  let steps = 0;
  let text = '';
  let lastText = '';
  let stepText = '';
  let finishReason = 'unknown';
  let error: unknown;

  /** Whether messages were injected: from then on the SDK's own copy of the conversation lacks them. */
  let injectedAny = false;
  const withInjected = (injected: readonly ModelMessage[] | undefined) => {
    if (injected !== undefined && injected.length > 0) {
      conversation.push(...injected);
      injectedAny = true;
    }
    // Handing the SDK the conversation makes it copy it again: only when its own would miss something.
    return injectedAny ? { messages: conversation } : undefined;
  };
  const takeInjected = () => {
    const injected = options.takeInjectedMessages?.();
    return isPromiseLike(injected) ? Promise.resolve(injected).then(withInjected) : withInjected(injected);
  };
  // No promise of its own where nothing waits (the event loop need not turn, nothing was injected).
  const prepareStep: PrepareStepFunction<ToolSet> = () => {
    const turn = letEventLoopTurn();
    return turn ? turn.then(takeInjected) : takeInjected();
  };
  const onStepEnd = async (step: StepResult<ToolSet>) => {
    steps++;
    const stepUsage: LoopUsage = { inputTokens: step.usage.inputTokens ?? 0, outputTokens: step.usage.outputTokens ?? 0 };
    usage.inputTokens += stepUsage.inputTokens;
    usage.outputTokens += stepUsage.outputTokens;
    const { cacheReadTokens, cacheWriteTokens } = step.usage.inputTokenDetails ?? {};
    if (cacheReadTokens) usage.cacheReadTokens = (usage.cacheReadTokens ?? 0) + (stepUsage.cacheReadTokens = cacheReadTokens);
    if (cacheWriteTokens) usage.cacheWriteTokens = (usage.cacheWriteTokens ?? 0) + (stepUsage.cacheWriteTokens = cacheWriteTokens);
    const messages = step.response.messages as ModelMessage[];
    conversation.push(...messages);
    text = step.text;
    if (step.text.trim() !== '') lastText = step.text;
    finishReason = step.finishReason;
    await options.onStepFinish?.({ stepNumber: step.stepNumber, messages, text: step.text, finishReason: step.finishReason, usage: stepUsage });
  };
  // One pipeline per loop: the activity watch outermost (a call's start is stored before its own
  // events, an ask), the call recorded durably before anything else runs, then the caller's entries.
  const watch = options.onToolCall || options.onToolResult ? [watchToolCalls({ onToolCall: options.onToolCall, onToolResult: options.onToolResult })] : [];
  const record = options.toolCalls ? [recordToolCalls(options.toolCalls)] : [];
  const middleware = [...watch, ...record, ...(options.toolMiddleware ?? [])];
  const tools = middleware.length > 0 ? composeTools(options.tools, middleware) : options.tools;
  // The loop's model watchers are entries of the model's own stack, not wrappers around it.
  const modelWatchers = [
    // Unstreamed, the model's whole text at once, before its tool calls run (as a stream would show it).
    ...(options.stream === false
      ? [
          watchModelText((content) => {
            stepText = content;
            if (stepText !== '') options.onTextDelta?.(stepText, stepText);
          }),
        ]
      : []),
    ...(options.onModelUsage ? [watchModelUsage(options.onModelUsage)] : []),
  ];
  const settings = {
    model: composeModel(options.model, modelWatchers),
    instructions: options.instructions,
    // The caller's array, which this loop never changes: the SDK keeps its own list from it.
    messages: options.messages,
    tools,
    stopWhen: options.shouldStop ? [stepCountIs(options.maxTurns), options.shouldStop] : stepCountIs(options.maxTurns),
    abortSignal: options.abortSignal,
    maxRetries: options.maxRetries ?? 0,
    prepareStep,
    telemetry: options.telemetry ?? (telemetryIsHeard() ? undefined : { isEnabled: false }),
  };

  try {
    if (options.stream === false) {
      // The SDK's step and tool callbacks cost about a fifth of a step (it builds, clones and
      // redacts an event for each), so this path watches the model and the tools directly.
      await generateText({
        ...settings,
        prepareStep: (step) => {
          stepText = '';
          options.onStepStart?.(steps);
          return prepareStep(step);
        },
        onStepEnd,
      });
    } else {
      const result = streamText({
        ...settings,
        // Tools are watched as they run (the pipeline), as without streaming: a tool's stream part
        // reaches this loop only after the tool started, so events it writes itself (an ask for
        // approval) would come first.
        // The error also arrives as a stream part and is returned; the SDK's default logs it whole.
        onError: () => {},
        onStepEnd,
      });
      for await (const part of result.fullStream) {
        switch (part.type) {
          case 'start-step':
            stepText = '';
            options.onStepStart?.(steps);
            break;
          case 'text-delta':
            stepText += part.text;
            options.onTextDelta?.(part.text, stepText);
            break;
          case 'error':
            error ??= part.error;
            break;
        }
      }
    }
  } catch (caught) {
    error ??= caught;
  }

  const aborted = options.abortSignal.aborted;
  if (stepText.trim() !== '' && (aborted || error)) lastText = stepText;
  if (error !== undefined && options.redactor) error = options.redactor.redactError(error);
  return { text, lastText, finishReason, steps, usage, error: aborted ? undefined : error, aborted };
}

/** The SDK's tracing channel: its `hasSubscribers` follows subscriptions made at any time. */
const sdkTracing = tracingChannel(AI_SDK_TELEMETRY_TRACING_CHANNEL);

/** Whether anyone could receive the AI SDK's telemetry events now. */
export function telemetryIsHeard(): boolean {
  // Where `registerTelemetry` keeps its integrations.
  const integrations = (globalThis as { AI_SDK_TELEMETRY_INTEGRATIONS?: unknown[] }).AI_SDK_TELEMETRY_INTEGRATIONS;
  return (integrations?.length ?? 0) > 0 || sdkTracing.hasSubscribers;
}
