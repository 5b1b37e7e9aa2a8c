import type { Tool, ToolExecutionOptions, ToolSet } from 'ai';

/**
 * cadre's one tool pipeline: everything done around a tool call (the activity watch, redaction of
 * the result, the input check, permission and ask, recording the call, stop) is an entry of one
 * list, composed once per tool set, the way hono's `compose.ts` runs middleware. A new concern is
 * one more entry, never one more wrapper around `execute`.
 *
 * An entry runs synchronously unless it has something to wait for: a call that nothing makes wait
 * (a rule allows it, the tool answers at once) costs no promise of the pipeline's own.
 *
 * @example
 * const timing: ToolMiddleware = {
 *   name: 'timing',
 *   handle(call, next) {
 *     const started = performance.now();
 *     return mapToolOutput(next, { end: (ok) => log(call.name, ok, performance.now() - started) });
 *   },
 * };
 * const tools = composeTools({ read_file, bash }, [timing, checkToolInput]);
 * @module
 */

/** What a tool's `execute` may give back: a value, a promise of one, or an async iterable of (preliminary) values. */
export type ToolOutput = unknown;

/** A tool's `execute`, as the AI SDK calls it. */
export type ToolExecute = (input: unknown, options: ToolExecutionOptions<any>) => ToolOutput;

/** One tool of the set being composed, as an entry sees it when it decides whether it applies. */
export interface PipelineTool {
  /** The tool's name in the set (what the model calls). */
  readonly name: string;
  /** The tool as it was given, before any composition: look its metadata up on this (`toolInfo`). */
  readonly tool: Tool;
}

/** One tool call going through the pipeline. Entries read it, and may change `input`, `checked` and `execute`. */
export interface ToolCall extends PipelineTool {
  readonly toolCallId: string;
  /** The input. The input check replaces it with the checked value (defaults applied). */
  input: unknown;
  /** True once `input` is the value the tool's own schema accepted (set by the input check). */
  checked: boolean;
  /** The AI SDK's options of this call: `abortSignal` (the run's stop), `messages`, `context`. */
  readonly options: ToolExecutionOptions<any>;
  /**
   * What runs at the end of the pipeline, with `input` and `options`. An entry may replace it: the
   * input check puts the tool's execute that skips the schema check it already made.
   */
  execute: ToolExecute;
}

/** Runs the rest of the pipeline (the later entries, then the tool); call it at most once. */
export type ToolNext = () => ToolOutput;

/**
 * An entry of the tool pipeline. `handle` gets the call and `next`; it returns what `next()`
 * returned (or a mapped version of it, see {@link mapToolOutput}), or throws to refuse the call:
 * the AI SDK hands a thrown error to the model as the tool's error result.
 */
export interface ToolMiddleware {
  /** A short name, for stack traces and errors (`check-input`, `permission`). */
  readonly name: string;
  /**
   * Whether the entry applies to a tool, asked once per tool when a set is composed: an entry that
   * does not apply costs that tool's calls nothing. @default every tool with an `execute`
   */
  appliesTo?(tool: PipelineTool): boolean;
  handle(call: ToolCall, next: ToolNext): ToolOutput;
}

/** A composed tool: what it was made from, so composing it again adds entries instead of a layer. */
interface Composition {
  original: Tool;
  execute: ToolExecute;
  chain: readonly ToolMiddleware[];
}

const compositions = new WeakMap<object, Composition>();

/** The tool a composed tool was made from (itself when it was not composed). */
export function originalTool(tool: Tool): Tool {
  return compositions.get(tool)?.original ?? tool;
}

/**
 * The tools, each call of each going through `middleware`, first entry outermost. Tools without
 * `execute` (provider-executed or client-side ones) are passed through. A tool that was composed
 * before keeps one pipeline: the new entries run before its earlier ones.
 */
export function composeTools(tools: ToolSet, middleware: readonly ToolMiddleware[]): ToolSet {
  const composed: ToolSet = {};
  for (const [name, tool] of Object.entries(tools)) composed[name] = composeTool(name, tool, middleware);
  return composed;
}

/** One tool of {@link composeTools}. */
export function composeTool(name: string, tool: Tool, middleware: readonly ToolMiddleware[]): Tool {
  const earlier = compositions.get(tool);
  const original = earlier?.original ?? tool;
  const execute = earlier?.execute ?? (original.execute as ToolExecute | undefined);
  if (execute === undefined) return tool;
  const subject: PipelineTool = { name, tool: original };
  const chain = [...middleware.filter((entry) => entry.appliesTo?.(subject) ?? true), ...(earlier?.chain ?? [])];
  if (chain.length === 0) return original;

  const dispatch = (call: ToolCall, index: number): ToolOutput => {
    if (index === chain.length) return call.execute(call.input, call.options);
    const entry = chain[index]!;
    let called = false;
    return entry.handle(call, function next() {
      if (called) throw new Error(`The tool pipeline's entry '${entry.name}' called next() twice.`);
      called = true;
      return dispatch(call, index + 1);
    });
  };
  const composed = {
    ...original,
    execute(input: unknown, options: ToolExecutionOptions<any>) {
      return dispatch({ name, tool: original, toolCallId: options.toolCallId, input, checked: false, options, execute }, 0);
    },
  } as Tool;
  compositions.set(composed, { original, execute, chain });
  return composed;
}

/** What {@link mapToolOutput} does with a call's outcome; each handler is optional. */
export interface ToolOutputHandlers {
  /** Maps the output (each value of an iterable one); returns what goes on. */
  value?(value: unknown): unknown;
  /** Maps a failure; returns the error to throw instead. */
  error?(error: unknown): unknown;
  /** Told once when the call ended: after its value, its iterable's last value, or its failure. */
  end?(ok: boolean): void;
}

/**
 * Runs `next` and applies `handlers` to its outcome, whatever form it takes: a value now (then
 * synchronously, with no promise made), a promise, an async iterable of preliminary results, or
 * a thrown error. The building block of entries that look at or change results.
 */
export function mapToolOutput(next: ToolNext, handlers: ToolOutputHandlers): ToolOutput {
  let output: ToolOutput;
  try {
    output = next();
  } catch (error) {
    handlers.end?.(false);
    throw handlers.error ? handlers.error(error) : error;
  }
  if (isPromiseLike(output)) {
    return Promise.resolve(output).then(
      (value) => {
        handlers.end?.(true);
        return handlers.value ? handlers.value(value) : value;
      },
      (error: unknown) => {
        handlers.end?.(false);
        throw handlers.error ? handlers.error(error) : error;
      },
    );
  }
  if (isAsyncIterable(output)) return mapIterable(output, handlers);
  handlers.end?.(true);
  return handlers.value ? handlers.value(output) : output;
}

async function* mapIterable(output: AsyncIterable<unknown>, handlers: ToolOutputHandlers): AsyncGenerator<unknown> {
  try {
    for await (const value of output) yield handlers.value ? handlers.value(value) : value;
  } catch (error) {
    handlers.end?.(false);
    throw handlers.error ? handlers.error(error) : error;
  }
  handlers.end?.(true);
}

/** Whether a value is a promise or another thenable. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as PromiseLike<unknown>).then === 'function';
}

/** Whether a value is an async iterable (a tool's stream of preliminary results). */
export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value != null && typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';
}
