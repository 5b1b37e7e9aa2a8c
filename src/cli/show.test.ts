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

  it('shows the messages sent to a run: who sent each, whether it waits or where it arrived, and its text', () => {
    const message = { from: 'person' as const, interrupt: true, sent_at: '2025-01-01T00:00:05.000Z', delivered_to: null, delivered_at: null };
    const text = renderRunDetail(
      runFixture({
        status: 'running',
        messages: [
          { ...message, id: 'msg_1', text: 'Look at the docs.', delivered_at: '2025-01-01T00:00:06.000Z', delivered_to: 'transcript' },
          { ...message, id: 'msg_2', from: 'parent', interrupt: false, text: 'Then stop.' },
        ],
      }),
      [],
      '2025-01-01T00:00:10.000Z',
    );
    expect(text).toContain(
      [
        'Messages:',
        '  2025-01-01T00:00:05.000Z from a person, interrupting: delivered 2025-01-01T00:00:06.000Z',
        '    Look at the docs.',
        '  2025-01-01T00:00:05.000Z from the parent: pending (the subagent gets it before its next model call)',
        '    Then stop.',
      ].join('\n'),
    );
    expect(renderRunDetail(runFixture(), [], '2025-01-01T00:00:10.000Z')).not.toContain('Messages:');
  });

  it('shows the cost of a run whose usage says it, and no cost line for one whose does not', () => {
    const show = (usage: { input_tokens: number; output_tokens: number; cost_usd?: number }) =>
      renderRunDetail(runFixture({ status: 'completed', ended_at: '2025-01-01T00:00:09.000Z', usage }), [], '2025-01-01T00:00:10.000Z');
    expect(show({ input_tokens: 10, output_tokens: 2, cost_usd: 0.01234 })).toContain('  cost:        $0.0123');
    expect(show({ input_tokens: 10, output_tokens: 2 })).not.toContain('cost:');
  });
});
