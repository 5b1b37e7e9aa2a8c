import { describe, expect, it } from 'vitest';
import { colorEnabled, liveViewEnabled, type CliContext } from './cli-context.ts';

function context(env: CliContext['env'], isTTY: boolean): CliContext {
  const stream = { isTTY, write: () => true };
  return { cwd: '/', env, stdin: { async *[Symbol.asyncIterator]() {} }, stdout: stream, stderr: stream };
}

describe('cli-context', () => {
  it('keeps the live view on a terminal with NO_COLOR set, without colour', () => {
    const terminal = context({ NO_COLOR: '1' }, true);
    expect(liveViewEnabled(terminal)).toBe(true);
    expect(colorEnabled(terminal)).toBe(false);
  });

  it('colours a terminal when NO_COLOR is unset or empty', () => {
    expect(colorEnabled(context({}, true))).toBe(true);
    expect(colorEnabled(context({ NO_COLOR: '' }, true))).toBe(true);
  });

  it('writes plain lines to a pipe, in CI, and on a dumb terminal', () => {
    expect(liveViewEnabled(context({}, false))).toBe(false);
    expect(liveViewEnabled(context({ CI: 'true' }, true))).toBe(false);
    expect(liveViewEnabled(context({ TERM: 'dumb' }, true))).toBe(false);
  });
});
