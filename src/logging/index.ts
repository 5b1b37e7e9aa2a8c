export { createLogger, type CreateLoggerOptions, type LogDestination } from './create-logger.ts';
export { defaultLogger, reportToDefaultLogger } from './default-logger.ts';
export { errorLogger, isLogLevel, logLevels, type Logger, type LogLevel, type LogMethod } from './logger.ts';
