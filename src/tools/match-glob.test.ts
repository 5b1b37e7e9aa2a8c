import { describe, expect, it } from 'vitest';
import { matchGlob } from './match-glob.ts';

describe('matchGlob', () => {
  it('matches a pattern without a slash against the file name at any depth', () => {
    expect(matchGlob('*.ts')('src/deep/a.ts')).toBe(true);
    expect(matchGlob('*.ts')('src/a.tsx')).toBe(false);
    expect(matchGlob('a?.md')('docs/ab.md')).toBe(true);
    expect(matchGlob('*.json')('.eslintrc.json')).toBe(true);
  });

  it('keeps * within a segment and lets ** span segments', () => {
    expect(matchGlob('src/*.ts')('src/a.ts')).toBe(true);
    expect(matchGlob('src/*.ts')('src/deep/a.ts')).toBe(false);
    expect(matchGlob('src/**/*.ts')('src/a.ts')).toBe(true);
    expect(matchGlob('src/**/*.ts')('src/x/y/a.ts')).toBe(true);
    expect(matchGlob('src/**')('src/x/y/a.ts')).toBe(true);
  });

  it('supports classes, alternatives and extglobs, and treats regular expression characters literally', () => {
    expect(matchGlob('[ab].ts')('src/b.ts')).toBe(true);
    expect(matchGlob('[ab].ts')('src/c.ts')).toBe(false);
    expect(matchGlob('*.@(ts|md)')('docs/README.md')).toBe(true);
    expect(matchGlob('*.@(ts|md)')('a.js')).toBe(false);
    expect(matchGlob('*.{ts,md}')('README.md')).toBe(true);
    expect(matchGlob('*.{ts,md}')('a.js')).toBe(false);
    expect(matchGlob('!(*.test).ts')('src/a.ts')).toBe(true);
    expect(matchGlob('!(*.test).ts')('src/a.test.ts')).toBe(false);
    expect(matchGlob('a+b.txt')('a+b.txt')).toBe(true);
    expect(matchGlob('a+b.txt')('aab.txt')).toBe(false);
  });
});
