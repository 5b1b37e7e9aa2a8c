import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core';
import { loadQuickJs } from './load-quickjs.ts';
import { sandboxPrelude } from './sandbox-prelude.ts';
import { type ScriptFailure, fatalFailure } from './workflow-script-error.ts';

/** Bounds the interpreter enforces itself. */
export interface InterpreterBounds {
  cpuMs: number;
  memoryBytes: number;
  stackBytes: number;
}

/** A message of the script to the host, in the order the script sent it (see sandbox-prelude.ts). */
export interface OutboundMessage {
  op: string;
  token: number;
  text: string;
}

/** What one step inside the interpreter produced. */
export interface StepResult {
  messages: OutboundMessage[];
  /** Set when the interpreter can go on no more (an interrupt, memory, an internal error). */
  fatal?: ScriptFailure;
  /** Interpreter time used so far, all steps together. */
  spentMs: number;
}

/** Enters the interpreter with one message and runs what it queued. */
export type InterpreterStep = (op: 'deliver' | 'invoke' | 'start', token: number, text: string) => StepResult;

/**
 * Makes a QuickJS interpreter with the prelude loaded and no clock, randomness, typed arrays or
 * host object; returns the function that steps it. Runs inside the sandbox worker
 * (sandbox-worker.ts), so nothing here can block the host's event loop.
 */
export async function createInterpreter(bounds: InterpreterBounds): Promise<InterpreterStep> {
  const { module, intrinsics } = await loadQuickJs();
  const runtime = module.newRuntime();
  runtime.setMemoryLimit(bounds.memoryBytes);
  runtime.setMaxStackSize(bounds.stackBytes);
  let spentMs = 0;
  let sliceStart: number | null = null;
  runtime.setInterruptHandler(() => sliceStart !== null && spentMs + performance.now() - sliceStart > bounds.cpuMs);
  const context = runtime.newContext({ intrinsics });
  let messages: OutboundMessage[] = [];
  const outbound = context.newFunction('outbound', (op, token, text) => {
    messages.push({
      op: context.typeof(op) === 'string' ? context.getString(op) : '',
      token: context.typeof(token) === 'number' ? context.getNumber(token) : -1,
      text: context.typeof(text) === 'string' ? context.getString(text) : 'null',
    });
  });
  context.setProp(context.global, '__cadre_outbound', outbound);
  outbound.dispose();
  const prelude = context.evalCode(sandboxPrelude, 'prelude.js');
  if (prelude.error) throw new Error(`The sandbox prelude failed: ${JSON.stringify(context.dump(prelude.error))}`);
  const inbound = prelude.value;
  let dead: ScriptFailure | undefined;

  return function step(op, token, text) {
    messages = [];
    if (dead) return { messages, fatal: dead, spentMs };
    sliceStart = performance.now();
    try {
      const args = [context.newString(op), context.newNumber(token), context.newString(text)];
      const result = context.callFunction(inbound, context.undefined, ...args);
      for (const arg of args) arg.dispose();
      if (result.error) dead = failureOf(context, result.error);
      else {
        result.value.dispose();
        const jobs = runtime.executePendingJobs();
        if (jobs.error) dead = failureOf(context, jobs.error);
      }
    } catch (error) {
      dead = { kind: 'interpreter', message: `The interpreter failed: ${String(error instanceof Error ? error.message : error).split('\n')[0]}` };
    } finally {
      spentMs += performance.now() - (sliceStart ?? 0);
      sliceStart = null;
    }
    return { messages, fatal: dead, spentMs };
  };
}

/** An error that escaped the interpreter (uncatchable inside it: an interrupt, memory). */
function failureOf(context: QuickJSContext, handle: QuickJSHandle): ScriptFailure {
  let dumped: unknown;
  try {
    dumped = context.dump(handle);
  } catch {
    dumped = { name: 'InternalError', message: 'out of memory' };
  }
  handle.dispose();
  const { name = 'Error', message = '' } = (dumped ?? {}) as { name?: unknown; message?: unknown };
  return fatalFailure(String(name), String(message));
}
