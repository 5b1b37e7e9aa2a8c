import { describe, expect, it } from 'vitest';
// @ts-expect-error: the dashboard's scripts are plain JavaScript, without types
import { costText } from './assets/format.js';

describe('the dashboard run card', () => {
  it("shows a run's cost where its usage says it", () => {
    expect(costText({ input_tokens: 10, output_tokens: 2, cost_usd: 0.01234 })).toBe(' · $0.0123');
    expect(costText({ input_tokens: 10, output_tokens: 2 })).toBe('');
  });
});
