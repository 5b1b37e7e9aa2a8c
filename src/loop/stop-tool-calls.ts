import { onAbort } from '../util/on-abort.ts';
import { isPromiseLike, type ToolMiddleware } from './tool-pipeline.ts';

/** How long a stopped call has to end on its own (with its own result) before it is given up. */
const stopGraceMs = 2000;

/**
 * The tool pipeline's stop entry: a call still running 2 s after its loop was stopped (the run's
 * abort signal) ends with the stop's reason, so a tool that ignores its signal cannot hold a
 * stopped run. A tool that honours the signal ends first with its own result (a foreground
 * delegation says which run it stopped); one that fails as a message interrupts its run fails with
 * the interrupt's reason. A call that answers at once pays nothing.
 */
export const stopToolCalls: ToolMiddleware = {
  name: 'stop',
  handle(call, next) {
    const signal = call.options.abortSignal;
    const output = next();
    if (signal === undefined || !isPromiseLike(output)) return output;
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const giveUpLater = () => {
        timer = setTimeout(() => reject(signal.reason), stopGraceMs);
        timer.unref();
      };
      // One listener on the run's signal for all its calls: a step may make hundreds at once.
      const forget = signal.aborted ? undefined : onAbort(signal, giveUpLater);
      if (signal.aborted) giveUpLater();
      const settle = () => {
        forget?.();
        clearTimeout(timer);
      };
      output.then(
        (value) => {
          settle();
          resolve(value);
        },
        (error: unknown) => {
          settle();
          // A call that failed as its loop was interrupted by a message says so, not how its tool saw the abort.
          reject(signal.aborted && isInterrupt(signal.reason) ? signal.reason : error);
        },
      );
    });
  },
};

/** Whether an abort reason is a message's interrupt (`RunInterruptSignal`, by name: any copy of cadre). */
function isInterrupt(reason: unknown): boolean {
  return typeof reason === 'object' && reason !== null && (reason as { name?: string }).name === 'RunInterruptSignal';
}
