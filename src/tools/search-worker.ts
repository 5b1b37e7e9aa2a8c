/**
 * The search worker's entry: runs one {@link SearchJob} off the main thread so that no pattern,
 * glob or `.gitignore` rule can block the process, and posts its lines in batches.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ToolInputError } from './tool-input-error.ts';
import { runSearchJob, type SearchJob, type SearchMessage } from './search-job.ts';

const port = parentPort!;
let batch: string[] = [];
let flushedAt = performance.now();

function post(message: SearchMessage): void {
  port.postMessage(message);
}

function flush(): void {
  if (batch.length > 0) post({ type: 'lines', lines: batch });
  batch = [];
  flushedAt = performance.now();
}

runSearchJob(workerData as SearchJob, (line) => {
  batch.push(line);
  // Batches keep messages few; the time bound keeps the lines found so far with the main thread for a deadline.
  if (batch.length >= 200 || performance.now() - flushedAt > 50) flush();
}).then(
  (end) => {
    flush();
    post({ type: 'done', note: end.note });
  },
  (error: unknown) => {
    flush();
    if (ToolInputError.isInstance(error)) post({ type: 'input-error', message: error.message });
    else post({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  },
);
