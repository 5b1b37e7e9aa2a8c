import { describe, expect, it } from 'vitest';
import { splitIntoChunks } from './split-into-chunks.ts';

describe('splitIntoChunks', () => {
  it('cuts text into pieces of the given size', () => {
    expect(splitIntoChunks('abcdefg', 3)).toEqual(['abc', 'def', 'g']);
    expect(splitIntoChunks('', 3)).toEqual([]);
  });

  it('never splits a surrogate pair', () => {
    expect(splitIntoChunks('ab😀cd', 3)).toEqual(['ab', '😀c', 'd']);
    expect(splitIntoChunks('a😀', 1)).toEqual(['a', '😀']);
  });
});
