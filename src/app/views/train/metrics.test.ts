import { describe, expect, it } from 'vitest';
import { retentionMetrics } from '../../../train/labels.ts';
import { coverageSummary, domainEvalTable, formatMetric, overallMetrics, retentionLines, templateMixText } from './metrics.ts';

describe('Train view metrics', () => {
  it('show label retention overall and per domain, as the method reports it, from the run’s metrics', () => {
    const values = retentionMetrics({
      overall: { kept: 7094, rejected: 3156, failed: 3, judged: 10250, total: 10253, rate: 7094 / 10250 },
      perDomain: {
        terminal: { kept: 94, rejected: 156, failed: 3, judged: 250, total: 253, rate: 94 / 250 },
        mcp: { kept: 7000, rejected: 3000, failed: 0, judged: 10000, total: 10000, rate: 0.7 },
      },
    });
    expect(retentionLines(values)).toEqual([
      'overall: 7,094 of 10,250 kept, 69.2% (3 judge failures left out)',
      'mcp: 7,000 of 10,000 kept, 70.0%',
      'terminal: 94 of 250 kept, 37.6% (3 judge failures left out)',
    ]);
    expect(retentionLines({ loss: 1 })).toEqual([]);
    expect(formatMetric('labels_retention', 0.692)).toBe('69.2%');
    expect(formatMetric('eval_verifier_pass', 0.25)).toBe('25.0%');
    expect(formatMetric('ratio_std', 0.000123456)).toBe('0.00012');
  });
});

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

describe('the template mix in the run panel', () => {
  it('gives the shares of the stage mix and describes the user’s own versions', () => {
    expect(templateMixText({ stage: 'sft', spec: {} }).mix).toBe('v0 30% · v1 20% · v2 20% · compact 30%');
    const run = {
      stage: 'sft' as const,
      spec: { templates: { v0: 1, v3: 1, v1: 0 }, templateSet: { v3: { description: 'optimized (Optimize v0, r2c1): added a line' } } },
    };
    expect(templateMixText(run)).toEqual({ mix: 'v0 50% · v3 50%', own: ['v3: optimized (Optimize v0, r2c1): added a line'] });
  });

  it('put the per-domain evaluation figures in a table of their own, a row per domain', () => {
    const latest = [
      { name: 'eval_loss', value: 2.5, step: 40 },
      { name: 'eval_loss/web', value: 2.75, step: 40 },
      { name: 'eval_judge_mean/web', value: 12, step: 40 },
      { name: 'eval_loss/my_domain', value: 2.25, step: 40 },
      { name: 'eval_judge_mean/mcp', value: 9, step: 20 },
      { name: 'labels_kept_web', value: 3, step: 0 },
    ];
    expect(overallMetrics(latest).map((m) => m.name)).toEqual(['eval_loss', 'labels_kept_web']);
    expect(domainEvalTable(latest)).toEqual({
      metrics: ['eval_loss', 'eval_judge_mean'],
      rows: [
        { domain: 'mcp', step: 20, values: { eval_judge_mean: 9 } },
        { domain: 'my_domain', step: 40, values: { eval_loss: 2.25 } },
        { domain: 'web', step: 40, values: { eval_loss: 2.75, eval_judge_mean: 12 } },
      ],
    });
    expect(domainEvalTable([{ name: 'loss', value: 1, step: 1 }]).rows).toEqual([]);
  });
});
