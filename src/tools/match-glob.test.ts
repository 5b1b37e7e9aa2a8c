import { describe, expect, it } from 'vitest';
import { matchGlob } from './match-glob.ts';

describe('matchGlob', () => {
  it('matches a pattern without a slash against the file name at any depth', () => {
    expect(matchGlob('*.ts')('src/deep/a.ts')).toBe(true);
    expect(matchGlob('*.ts')('src/a.tsx')).toBe(false);
    expect(matchGlob('a?.md')('docs/ab.md')).toBe(true);
  });

  it('keeps * within a segment and lets ** span segments', () => {
    expect(matchGlob('src/*.ts')('src/a.ts')).toBe(true);
    expect(matchGlob('src/*.ts')('src/deep/a.ts')).toBe(false);
    expect(matchGlob('src/**/*.ts')('src/a.ts')).toBe(true);
    expect(matchGlob('src/**/*.ts')('src/x/y/a.ts')).toBe(true);
    expect(matchGlob('src/**')('src/x/y/a.ts')).toBe(true);
  });

  it('supports alternatives and treats regular expression characters literally', () => {
    expect(matchGlob('*.{ts,md}')('README.md')).toBe(true);
    expect(matchGlob('*.{ts,md}')('a.js')).toBe(false);
    expect(matchGlob('a+b.txt')('a+b.txt')).toBe(true);
    expect(matchGlob('a+b.txt')('aab.txt')).toBe(false);
    expect(() => matchGlob('{a,b')).toThrow("Unclosed '{'");
  });
});
