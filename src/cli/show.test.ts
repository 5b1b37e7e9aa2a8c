import { describe, expect, it } from 'vitest';
import { runFixture } from '../store/store-fixtures.ts';
import { renderRunDetail } from './show.ts';

describe('cadre show', () => {
  it('says whether a background run has notified its parent: pending, delivered or suppressed', () => {
    const show = (notification: { delivered_at: string | null; suppressed: boolean } | null) =>
      renderRunDetail(
        runFixture({ mode: 'background', status: 'completed', ended_at: '2025-01-01T00:00:09.000Z', notification }),
        [],
        '2025-01-01T00:00:10.000Z',
      );
    expect(show({ delivered_at: null, suppressed: false })).toMatch(
      /notified: {4}pending \(its parent gets it before its next model call, or when cadre restarts\)/,
    );
    expect(show({ delivered_at: '2025-01-01T00:00:09.500Z', suppressed: false })).toContain('notified:    delivered 2025-01-01T00:00:09.500Z');
    expect(show({ delivered_at: null, suppressed: true })).toContain('notified:    no (suppressed');
    expect(show(null)).not.toContain('notified:');
  });
});
