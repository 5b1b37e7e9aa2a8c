/**
 * The search worker's entry: runs {@link SearchJob}s posted by run-search.ts, one at a time, off
 * the main thread, so that no pattern, glob or `.gitignore` rule can block the process. Lines go
 * back in batches, then a `done` (or an error) message ends each job.
 */
import { parentPort } from 'node:worker_threads';
import { runSearchJob, type SearchJob, type SearchMessage } from './search-job.ts';
import { ToolInputError } from './tool-input-error.ts';

const port = parentPort!;

function post(message: SearchMessage): void {
  port.postMessage(message);
}

async function run(job: SearchJob): Promise<void> {
  let batch: string[] = [];
  let flushedAt = performance.now();
  const flush = () => {
    if (batch.length > 0) post({ type: 'lines', lines: batch });
    batch = [];
    flushedAt = performance.now();
  };
  try {
    const end = await runSearchJob(job, (line) => {
      batch.push(line);
      // Batches keep messages few; the time bound keeps what was found with the main thread for a deadline.
      if (batch.length >= 200 || performance.now() - flushedAt > 50) flush();
    });
    flush();
    post({ type: 'done', note: end.note });
  } catch (error) {
    flush();
    if (ToolInputError.isInstance(error)) post({ type: 'input-error', message: error.message });
    else post({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  }
}

let queue = Promise.resolve();
port.on('message', (job: SearchJob) => {
  queue = queue.then(() => run(job));
});
