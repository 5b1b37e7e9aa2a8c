import { describe, expect, it } from 'vitest';
import { parseQueueUrl } from './run-job.ts';

describe('parseQueueUrl', () => {
  it("takes cadre's prefix out of the URL, with 'cadre' by default", () => {
    expect(parseQueueUrl('redis://127.0.0.1:6379/2?prefix=team-a')).toEqual({ url: 'redis://127.0.0.1:6379/2', prefix: 'team-a' });
    expect(parseQueueUrl(' rediss://user:pw@redis:6380 ')).toEqual({ url: 'rediss://user:pw@redis:6380', prefix: 'cadre' });
  });

  it('refuses another scheme and a prefix that would break the key layout', () => {
    expect(() => parseQueueUrl('postgres://db/x')).toThrow("A queue is a redis:// URL, not 'postgres:'");
    expect(() => parseQueueUrl('redis://h?prefix=a:b')).toThrow("The queue prefix 'a:b' may hold only");
  });
});
