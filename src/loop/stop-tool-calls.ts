import { isPromiseLike, type ToolMiddleware } from './tool-pipeline.ts';

/**
 * The tool pipeline's stop entry: a call still running when its loop is stopped (the run's abort
 * signal) ends at once with the stop's reason, so a tool that ignores its signal cannot hold a
 * stopped run. The tool is told through the same signal and may finish its own cleanup. A call
 * that answers at once pays nothing.
 */
export const stopToolCalls: ToolMiddleware = {
  name: 'stop',
  handle(call, next) {
    const signal = call.options.abortSignal;
    const output = next();
    if (signal === undefined || !isPromiseLike(output)) return output;
    if (signal.aborted) {
      // The call was made and will settle on its own: nobody may be left to hear a failure.
      Promise.resolve(output).then(undefined, () => {});
      return Promise.reject(signal.reason);
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      output.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  },
};
