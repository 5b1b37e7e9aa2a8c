/**
 * The sandbox worker's entry: one interpreter per worker, for one script. The host posts
 * `{op, token, text}` requests; each is answered, in order, by the {@link StepResult} of running it,
 * so the host handles what the script asked within the request that caused it. A script that
 * blocks this thread blocks only this worker, which the host ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createInterpreter, type InterpreterBounds, type InterpreterStep } from './sandbox-interpreter.ts';

const port = parentPort!;
const ready: Promise<InterpreterStep> = createInterpreter(workerData as InterpreterBounds);
// The host's watchdog counts from here: starting a worker and compiling QuickJS is not the script's time.
ready.then(
  () => port.postMessage({ ready: true }),
  () => {},
);
port.on('message', async (request: { op: 'deliver' | 'invoke' | 'start'; token: number; text: string }) => {
  try {
    const step = await ready;
    port.postMessage(step(request.op, request.token, request.text));
  } catch (error) {
    port.postMessage({ messages: [], spentMs: 0, fatal: { kind: 'interpreter', message: `The interpreter did not start: ${String(error)}` } });
  }
});
