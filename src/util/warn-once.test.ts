import { describe, expect, it } from 'vitest';
import { warnOnce } from './warn-once.ts';

describe('warnOnce', () => {
  it('writes each message once per process, however often it is said', () => {
    const written: string[] = [];
    const write = (line: string) => written.push(line);
    expect(warnOnce('warn-once test: a', write)).toBe(true);
    expect(warnOnce('warn-once test: a', write)).toBe(false);
    expect(warnOnce('warn-once test: b', write)).toBe(true);
    expect(warnOnce('warn-once test: a', write)).toBe(false);
    expect(written).toEqual(['warn-once test: a', 'warn-once test: b']);
  });
});
