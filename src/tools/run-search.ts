import { Worker } from 'node:worker_threads';
import type { SearchJob, SearchMessage } from './search-job.ts';
import { ToolInputError } from './tool-input-error.ts';

/** Options of {@link runSearch}. */
export interface RunSearchOptions {
  /** The tool's abort signal: a stop ends the worker at once. */
  signal?: AbortSignal;
  /** After this long the worker is ended and the lines found so far are returned with a note. */
  timeoutMs: number;
  /** The tool's name, for the note. */
  toolName: string;
}

/** What a search found, and why it stopped early, if it did. */
export interface SearchResult {
  lines: string[];
  note?: string;
}

// Run as TypeScript from the sources, as JavaScript once built.
const workerUrl = new URL(import.meta.url.endsWith('.ts') ? './search-worker.ts' : './search-worker.js', import.meta.url);

/** One worker kept warm between searches (starting one costs ~100 ms); it never keeps the process alive. */
let idleWorker: Worker | undefined;

function takeWorker(): Worker {
  const worker = idleWorker ?? new Worker(workerUrl);
  idleWorker = undefined;
  worker.removeAllListeners();
  worker.ref();
  return worker;
}

function releaseWorker(worker: Worker): void {
  worker.removeAllListeners();
  if (idleWorker) {
    void worker.terminate();
    return;
  }
  worker.unref();
  idleWorker = worker;
  worker.once('exit', () => {
    if (idleWorker === worker) idleWorker = undefined;
  });
  worker.on('error', () => {});
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The search was stopped.', 'AbortError');
}

/**
 * Runs a {@link SearchJob} in a worker thread: the main thread only waits for messages, so timers,
 * stops and other runs go on however slow a pattern or glob is. A stop terminates the worker at
 * once (the promise rejects with the signal's reason); the deadline terminates it and keeps what
 * was found so far. A worker that finished its job is kept for the next search.
 * @throws {ToolInputError} for a pattern or glob that does not parse.
 */
export function runSearch(job: SearchJob, { signal, timeoutMs, toolName }: RunSearchOptions): Promise<SearchResult> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<SearchResult>((resolve, reject) => {
    const lines: string[] = [];
    const worker = takeWorker();
    let settled = false;
    const finish = (keepWorker: boolean, settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (keepWorker) releaseWorker(worker);
      else void worker.terminate();
      settle();
    };
    const onAbort = () => finish(false, () => reject(abortReason(signal!)));
    const timer = setTimeout(() => {
      const seconds = Math.round(timeoutMs / 100) / 10;
      const note = `(${toolName} stopped after ${seconds} s${lines.length > 0 ? ' with the results found so far' : ''}; narrow it with path, glob or a simpler pattern)`;
      finish(false, () => resolve({ lines, note }));
    }, timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (message: SearchMessage) => {
      if (message.type === 'lines') lines.push(...message.lines);
      else if (message.type === 'done') finish(true, () => resolve({ lines, note: message.note }));
      else if (message.type === 'input-error') finish(true, () => reject(new ToolInputError(message.message)));
      else finish(false, () => reject(new Error(`${toolName} failed: ${message.message}`)));
    });
    worker.on('error', (error) => finish(false, () => reject(error)));
    worker.on('exit', (code) => finish(false, () => reject(new Error(`${toolName} failed: its worker exited with code ${code}.`))));
    worker.postMessage(job);
  });
}
