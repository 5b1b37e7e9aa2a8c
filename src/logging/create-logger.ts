import { createRequire } from 'node:module';
import type { Logger as PinoLogger } from 'pino';
import { logLevels, type LogLevel, type Logger } from './logger.ts';

/** A stream a logger writes lines to. */
export interface LogDestination {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** The least severe level written. @default 'warn' */
  level?: LogLevel;
  /** @default process.stderr */
  destination?: LogDestination;
  /**
   * `json`: one JSON object per line (pino's format). `pretty`: `cadre: warn: message` lines for a
   * person. @default pretty on a terminal, else json
   */
  format?: 'json' | 'pretty';
  /** Applied to every line before it is written (the runtime's secret redaction). @default none */
  redact?: (text: string) => string;
  /** Fields on every line. @default { name: 'cadre' } */
  base?: Record<string, unknown>;
}

const severity = new Map<string, number>(logLevels.map((level, index) => [level, index]));

/**
 * cadre's logger: pino, loaded the first time a line is actually written (a process that logs
 * nothing never loads it), errors serialized with their `cause` chain.
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const { level = 'warn', destination = process.stderr, redact } = options;
  const format = options.format ?? (destination.isTTY === true ? 'pretty' : 'json');
  let pino: PinoLogger | undefined;
  const load = (): PinoLogger => {
    if (pino) return pino;
    // pino is CommonJS: required (synchronously) only once something is logged.
    const create = createRequire(import.meta.url)('pino') as typeof import('pino');
    const write = (line: string) => {
      const text = redact ? redact(line) : line;
      destination.write(format === 'pretty' ? prettyLine(text) : text);
    };
    pino = create.pino(
      {
        level,
        base: options.base ?? { name: 'cadre' },
        serializers: { err: create.stdSerializers.errWithCause },
        formatters: { level: (label) => ({ level: label }) },
      },
      { write },
    );
    return pino;
  };
  return wrap(level, load, {});
}

function wrap(level: LogLevel, load: () => PinoLogger, bindings: Record<string, unknown>): Logger {
  const threshold = severity.get(level)!;
  const method = (name: Exclude<LogLevel, 'silent'>) => {
    // A level below the threshold costs one comparison, and never loads pino.
    if (severity.get(name)! > threshold || level === 'silent') return () => {};
    return (fields: Record<string, unknown>, message?: string) => {
      const logger = load();
      logger[name]({ ...bindings, ...fields }, message);
    };
  };
  return {
    fatal: method('fatal'),
    error: method('error'),
    warn: method('warn'),
    info: method('info'),
    debug: method('debug'),
    trace: method('trace'),
    child: (more) => wrap(level, load, { ...bindings, ...more }),
  };
}

/** A JSON line as a person reads it: `cadre: warn: message (key=value ...)`, then the error's stack. */
function prettyLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { level, msg, err, time: _time, pid: _pid, hostname: _hostname, name, ...rest } = entry;
  const fields = Object.entries(rest)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  const error = err as { message?: string; stack?: string } | undefined;
  const head = `${String(name ?? 'cadre')}: ${String(level)}: ${String(msg ?? error?.message ?? '')}${fields === '' ? '' : ` (${fields})`}`;
  const detail = error && msg !== undefined && error.message !== undefined ? `\n  ${error.message}` : '';
  return `${head}${detail}\n`;
}
