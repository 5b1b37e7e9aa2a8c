import { Worker } from 'node:worker_threads';
import type { WorkflowApi, WorkflowScript } from '../workflow-api.ts';
import type { InterpreterBounds, StepResult } from './sandbox-interpreter.ts';
import { boundFailure, type ScriptFailure, thrownFailure, WorkflowScriptError } from './workflow-script-error.ts';

/** Bounds of one sandboxed script. */
export interface ScriptSandboxOptions {
  /** Interpreter time the script may use in all (waiting for runs does not count). @default 10000 */
  cpuMs?: number;
  /** Memory the interpreter may allocate, in bytes. @default 64 MiB */
  memoryBytes?: number;
  /** The interpreter's stack, in bytes (deep recursion fails past it). @default 512 KiB */
  stackBytes?: number;
  /** How long the script may wait with no run of it going before it counts as stalled. @default 60000 */
  idleMs?: number;
  /** Most `w.agent` calls; the next one throws in the script. @default 100 */
  maxRuns?: number;
}

type Settlement = { ok: true; value: unknown } | { ok: false; error: Record<string, unknown> };
type Waiter = { resolve: (value: unknown) => void; reject: (error: unknown) => void };

// Run as TypeScript from the sources, as JavaScript once built.
const workerUrl = new URL(import.meta.url.endsWith('.ts') ? './sandbox-worker.ts' : './sandbox-worker.js', import.meta.url);
/**
 * Time the host grants a step beyond the script's remaining interpreter time before it ends the
 * worker: generous, since a busy machine stretches wall time; it only catches what the interpreter's
 * own bound cannot (a native operation that never reaches an interrupt check).
 */
const watchdogGraceMs = 5_000;

/**
 * A {@link WorkflowScript} that runs `script` (the body of an async function of `w` and `input`)
 * in a sandbox (see {@link runSandboxedScript}). Each call starts from nothing, so a replay runs the
 * same text again from the start.
 */
export function sandboxedWorkflowScript(script: string, options: ScriptSandboxOptions = {}): WorkflowScript {
  return function sandboxedScript(w, input) {
    return runSandboxedScript(script, w, input, options);
  };
}

/**
 * Runs `script` with `w` and `input` in QuickJS compiled to WebAssembly, in a worker thread of its
 * own: no file system, network, clock, randomness, timers, `require`, `import` or host object
 * besides `w` and `input`; values cross as JSON text only (docs/workflows.md). Resolves to the
 * script's return value, or rejects with a {@link WorkflowScriptError}. The interpreter bounds
 * its own time and memory; a worker that does not answer in time is ended from here, so no script
 * can hold up the host's event loop.
 */
export function runSandboxedScript(script: string, w: WorkflowApi, input: unknown, options: ScriptSandboxOptions = {}): Promise<unknown> {
  const { cpuMs = 10_000, memoryBytes = 64 * 1024 * 1024, stackBytes = 512 * 1024, idleMs = 60_000, maxRuns = 100 } = options;
  const bounds: InterpreterBounds = { cpuMs, memoryBytes, stackBytes };
  const worker = new Worker(workerUrl, {
    workerData: bounds,
    // The interpreter's own memory is WebAssembly's, bounded by memoryBytes; this bounds the glue around it.
    resourceLimits: { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 16 },
  });
  const main = Promise.withResolvers<unknown>();
  const waiters = new Map<number, Waiter>();
  const replies: ((step: StepResult) => void)[] = [];
  let nextToken = 1;
  let agentCalls = 0;
  let agentsGoing = 0;
  let spentMs = 0;
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  let watchdog: ReturnType<typeof setTimeout> | undefined;
  let failure: WorkflowScriptError | undefined;
  let finished = false;
  let ready = false;

  const finish = (error: ScriptFailure | undefined, value?: unknown) => {
    if (finished) return;
    finished = true;
    clearTimeout(idleTimer);
    clearTimeout(watchdog);
    void worker.terminate();
    failure = error && new WorkflowScriptError(error.kind, error.message);
    for (const waiter of waiters.values()) waiter.reject(failure ?? new WorkflowScriptError('interpreter', 'The workflow script has ended.'));
    waiters.clear();
    if (failure) main.reject(failure);
    else main.resolve(value);
  };
  const armWatchdog = () => {
    clearTimeout(watchdog);
    if (ready && replies.length > 0) watchdog = setTimeout(() => finish(boundFailure('cpu')), Math.max(0, cpuMs - spentMs) + Math.max(watchdogGraceMs, cpuMs));
  };
  worker.on('message', (message: StepResult | { ready: true }) => {
    if ('ready' in message) ready = true;
    else replies.shift()?.(message);
    armWatchdog();
  });
  worker.on('error', (error: Error & { code?: string }) =>
    finish(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? boundFailure('memory') : { kind: 'interpreter', message: `The interpreter failed: ${error.message}` }),
  );
  worker.on('exit', () => finish({ kind: 'interpreter', message: 'The interpreter stopped.' }));

  /** Sends one message into the script and handles, in this async context, what the script asked meanwhile. */
  const send = async (op: 'deliver' | 'invoke' | 'start', token: number, text: string) => {
    if (finished) return;
    clearTimeout(idleTimer);
    const reply = new Promise<StepResult>((resolve) => replies.push(resolve));
    worker.postMessage({ op, token, text });
    if (replies.length === 1) armWatchdog();
    const step = await reply;
    if (finished) return;
    spentMs = step.spentMs;
    for (const message of step.messages) handle(message.op, message.token, message.text);
    if (step.fatal) return finish(step.fatal);
    if (!finished && agentsGoing === 0 && replies.length === 0) {
      // Nothing outside will wake the script unless a run of it is going: bound the wait.
      clearTimeout(idleTimer);
      idleTimer = setTimeout(
        () => finish({ kind: 'stalled', message: `The script waited ${idleMs} ms with no run going: it awaits a promise that never settles.` }),
        idleMs,
      );
    }
  };
  const deliver = (token: number, settlement: Settlement) => send('deliver', token, settlementText(settlement));
  /** Calls a function the script handed to w.parallel or w.pipeline, resolving to what it returns. */
  const invoke = (id: number, args: unknown[]): Promise<unknown> => {
    if (finished) return Promise.reject(failure ?? new WorkflowScriptError('interpreter', 'The workflow script has ended.'));
    const token = nextToken++;
    const settled = new Promise<unknown>((resolve, reject) => waiters.set(token, { resolve, reject }));
    void send('invoke', token, JSON.stringify({ id, args }));
    return settled;
  };
  /** Starts a call of `w` and delivers its end to the script. */
  const call = (token: number, start: () => Promise<unknown>, agent: boolean) => {
    if (agent) agentsGoing++;
    let promise: Promise<unknown>;
    try {
      promise = Promise.resolve(start());
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (value) => {
        if (agent) agentsGoing--;
        void deliver(token, { ok: true, value });
      },
      (error: unknown) => {
        if (agent) agentsGoing--;
        void deliver(token, { ok: false, error: hostErrorOf(error) });
      },
    );
  };
  const refuse = (token: number, message: string) => void deliver(token, { ok: false, error: { name: 'TypeError', message } });

  /** One message of the script; trusts nothing in it (the script may have rewritten the prelude's built-ins). */
  const handle = (op: string, token: number, text: string) => {
    if (finished) return;
    let message: any;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (op === 'settle') {
      const waiter = waiters.get(token);
      waiters.delete(token);
      const settlement = readSettlement(message);
      if (settlement.ok) waiter?.resolve(settlement.value);
      else waiter?.reject(Object.assign(new Error(String(settlement.error.message)), settlement.error));
      return;
    }
    if (op === 'phase' || op === 'log') {
      if (typeof message === 'string') w[op](message);
      return;
    }
    if (op === 'agent') {
      agentCalls++;
      const { agent, task, options: agentOptions } = message ?? {};
      if (agentCalls > maxRuns) return refuse(token, `This workflow may start at most ${maxRuns} runs (limits.maxWorkflowRuns).`);
      if (typeof agent !== 'string' || typeof task !== 'string')
        return refuse(token, 'w.agent(agent, task, options?) takes two strings: the agent and the task.');
      if (agentOptions !== null && (typeof agentOptions !== 'object' || Array.isArray(agentOptions)))
        return refuse(token, 'The options of w.agent must be an object.');
      return call(token, () => w.agent(agent, task, agentOptions ?? undefined), true);
    }
    const ids = message?.ids;
    if (!Array.isArray(ids) || !ids.every((id) => Number.isInteger(id) && id > 0)) return refuse(token, `w.${op} got no functions it can call.`);
    if (op === 'parallel') call(token, () => w.parallel(ids.map((id: number) => () => invoke(id, []))), false);
    else if (op === 'pipeline' && Array.isArray(message.items))
      call(token, () => w.pipeline(message.items, ...ids.map((id: number) => (value: unknown, index: number) => invoke(id, [value ?? null, index]))), false);
    else refuse(token, `w.${op} is not a function of w.`);
  };

  waiters.set(0, {
    resolve: (value) => finish(undefined, value),
    reject: (error) => {
      const { name, message } = error as { name?: unknown; message?: unknown };
      finish(thrownFailure(String(name), String(message)));
    },
  });
  void send('start', 0, JSON.stringify({ script, input: input ?? null }));
  return main.promise;
}

function settlementText(settlement: Settlement): string {
  try {
    return JSON.stringify(settlement);
  } catch (error) {
    return JSON.stringify({ ok: false, error: { name: 'TypeError', message: `The value is not JSON: ${firstLine(error)}` } });
  }
}

function readSettlement(message: unknown): Settlement {
  if (message && typeof message === 'object' && (message as { ok?: unknown }).ok === true)
    return { ok: true, value: (message as { value?: unknown }).value ?? null };
  const error = (message as { error?: unknown } | null)?.error;
  return { ok: false, error: error && typeof error === 'object' ? (error as Record<string, unknown>) : { name: 'Error', message: 'unknown error' } };
}

/** What the script sees of an error of the host (a run that did not complete): JSON fields only. */
function hostErrorOf(error: unknown): Record<string, unknown> {
  const source = (error ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = { name: typeof source.name === 'string' ? source.name : 'Error', message: firstLine(error) };
  const runId = source.run_id ?? source.runId;
  if (typeof runId === 'string') {
    // The library's name (runId) and the record's (run_id): a script may use either.
    out.run_id = runId;
    out.runId = runId;
  }
  if (typeof source.status === 'string') out.status = source.status;
  if (typeof source.key === 'string') out.key = source.key;
  const runError = source.error;
  if (runError && typeof runError === 'object') {
    const { kind, message } = runError as Record<string, unknown>;
    out.error = { kind: String(kind), message: String(message) };
  }
  return out;
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0].slice(0, 300);
}
