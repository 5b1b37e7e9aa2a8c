/** The levels of a {@link Logger}, from the most to the least severe; `silent` logs nothing. */
export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A log level, as pino names them. */
export type LogLevel = (typeof logLevels)[number];

/** One log method: fields first (`err` for an error), then the message, as pino takes them. */
export type LogMethod = (fields: Record<string, unknown>, message?: string) => void;

/**
 * Where cadre's structured logs go. A pino logger fits as it is (`createCadre({ logger: pino() })`);
 * so does anything with these methods.
 */
export interface Logger {
  fatal: LogMethod;
  error: LogMethod;
  warn: LogMethod;
  info: LogMethod;
  debug: LogMethod;
  trace: LogMethod;
  /** A logger whose lines all carry `bindings` (`{ component: 'server' }`). */
  child(bindings: Record<string, unknown>): Logger;
}

/** Whether `value` names a log level. */
export function isLogLevel(value: string): value is LogLevel {
  return (logLevels as readonly string[]).includes(value);
}

/** An `onError` callback that logs each error, with its cause chain, at `error`. */
export function errorLogger(logger: Logger, message = 'internal error'): (error: unknown) => void {
  return function logError(error: unknown) {
    logger.error({ err: error }, message);
  };
}
