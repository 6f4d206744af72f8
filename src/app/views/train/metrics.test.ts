import { describe, expect, it } from 'vitest';
import { coverageSummary, formatMetric } from './metrics.ts';

describe('coverage in the run panel', () => {
  it('states what the model sees in one sentence, as percentages', () => {
    expect(coverageSummary({ loss: 2 })).toBeNull();
    expect(coverageSummary({ coverage_system: 0.123, coverage_turns: 0.5, coverage_initial_state: 1, coverage_last_turn: 0.8 })).toBe(
      'The model sees 100% of the initial state, the newest turn whole in 80% of rows, 50% of earlier turns, 12% of the system prompt.',
    );
    expect(coverageSummary({ coverage_system: 0.5 })).toBe('The model sees 50% of the system prompt.');
    expect(coverageSummary({ coverage_system: 0.001, coverage_initial_state: 0 })).toBe('The model sees 0.0% of the initial state, 0.1% of the system prompt.');
    expect(formatMetric('coverage_turns', 0.4567)).toBe('45.7%');
  });
});
