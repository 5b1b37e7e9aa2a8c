import { createLogger } from './create-logger.ts';
import { errorLogger, type Logger } from './logger.ts';

let shared: Logger | undefined;

/**
 * The logger of parts made without one: warnings and errors to stderr (JSON lines off a terminal).
 * Made on first use.
 */
export function defaultLogger(): Logger {
  shared ??= createLogger();
  return shared;
}

/** The default `onError` of parts made without one: the error, with its cause, to {@link defaultLogger}. */
export function reportToDefaultLogger(error: unknown): void {
  errorLogger(defaultLogger())(error);
}
