import { ConfigError } from '../errors/config-error.ts';
import { createLogger } from '../logging/create-logger.ts';
import { isLogLevel, logLevels, type Logger, type LogLevel } from '../logging/logger.ts';
import type { CliContext } from './cli-context.ts';

/**
 * The command's logger on stderr: `--log-level`, else `CADRE_LOG_LEVEL`, else `fallback`; JSON
 * lines when stderr is not a terminal, short lines on one. Every line goes through `redact`
 * (the runtime's secret redactor once there is one).
 * @throws {ConfigError} for a level pino does not know
 */
export function cliLogger(context: CliContext, flags: { logLevel?: string }, redact: (text: string) => string, fallback: LogLevel = 'warn'): Logger {
  const given = flags.logLevel ?? (context.env.CADRE_LOG_LEVEL || undefined);
  const level = given ?? fallback;
  if (!isLogLevel(level)) {
    throw new ConfigError(`${flags.logLevel === undefined ? 'CADRE_LOG_LEVEL' : '--log-level'} must be one of ${logLevels.join(', ')}, not '${level}'.`);
  }
  return createLogger({ level, destination: context.stderr, redact });
}
