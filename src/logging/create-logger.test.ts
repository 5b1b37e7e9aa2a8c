import { describe, expect, it } from 'vitest';
import { createLogger } from './create-logger.ts';
import { errorLogger } from './logger.ts';

function capture(isTTY = false) {
  const lines: string[] = [];
  return { lines, destination: { isTTY, write: (text: string) => lines.push(text) } };
}

describe('createLogger', () => {
  it('writes one JSON object per line off a terminal, with the level by name and the fields given', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'info', destination }).child({ component: 'server' });
    logger.info({ method: 'GET', path: '/api/sessions', status: 200 }, 'request');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith('\n')).toBe(true);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 'info',
      name: 'cadre',
      component: 'server',
      method: 'GET',
      path: '/api/sessions',
      status: 200,
      msg: 'request',
    });
  });

  it('leaves out lines below its level', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'warn', destination });
    logger.info({}, 'not shown');
    logger.debug({}, 'not shown');
    logger.warn({}, 'shown');
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(['shown']);
    const silent = createLogger({ level: 'silent', destination });
    silent.fatal({}, 'not shown');
    expect(lines).toHaveLength(1);
  });

  it('logs an error with its cause chain and code, and redacted', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ destination, redact: (text) => text.replaceAll('sk-secret-1', '[redacted]') });
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    errorLogger(logger)(new Error('The model call failed with key sk-secret-1', { cause }));
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({
      level: 'error',
      msg: 'internal error',
      err: {
        type: 'Error',
        message: 'The model call failed with key [redacted]',
        cause: { message: 'connect ECONNREFUSED 127.0.0.1:9', code: 'ECONNREFUSED' },
      },
    });
    expect(lines[0]).not.toContain('sk-secret-1');
  });

  it('writes short lines for a person on a terminal', () => {
    const { lines, destination } = capture(true);
    const logger = createLogger({ level: 'info', destination });
    logger.info({ status: 200 }, 'request');
    logger.error({ err: new Error('boom') }, 'internal error');
    expect(lines).toEqual(['cadre: info: request (status=200)\n', 'cadre: error: internal error\n  boom\n']);
  });
});
