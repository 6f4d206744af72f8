import { describe, expect, it } from 'vitest';
import { addBatchLosses, DomainMeans, domainFigures, domainFiguresLine, domainMetricKey, parseDomainMetric } from './domainMetrics.ts';

describe('per-domain metrics', () => {
  it('keys a figure as <metric>/<domain> and reads it back, domain names with _ or / included', () => {
    expect(domainMetricKey('eval_loss', 'terminal')).toBe('eval_loss/terminal');
    expect(parseDomainMetric('eval_judge_mean/my_domain')).toEqual({ metric: 'eval_judge_mean', domain: 'my_domain' });
    expect(parseDomainMetric('eval_loss/a/b')).toEqual({ metric: 'eval_loss', domain: 'a/b' });
    for (const k of ['eval_loss', 'eval_judge_mean', 'labels_kept_web', '/x', 'x/']) expect(parseDomainMetric(k)).toBeNull();
  });

  it('means per domain, weighted for losses; figures grouped by domain in name order', () => {
    const m = new DomainMeans();
    m.add('web', 'eval_judge_mean', 10);
    m.add('web', 'eval_judge_mean', 20);
    m.add('mcp', 'eval_judge_mean', 7);
    m.addWeighted('mcp', 'eval_loss', 6, 3);
    m.addWeighted('mcp', 'eval_loss', 1, 1);
    m.addWeighted('os', 'eval_loss', 5, 0); // no weight: no figure
    const values = { eval_loss: 1.5, ...m.metrics() };
    expect(values).toEqual({ eval_loss: 1.5, 'eval_judge_mean/web': 15, 'eval_judge_mean/mcp': 7, 'eval_loss/mcp': 7 / 4 });
    const figures = domainFigures(values);
    expect(Object.keys(figures)).toEqual(['mcp', 'web']);
    expect(figures.mcp).toEqual({ eval_judge_mean: 7, eval_loss: 1.75 });
    expect(domainFiguresLine(40, figures)).toBe('eval by domain at step 40: mcp eval_judge_mean 7.000, eval_loss 1.750 · web eval_judge_mean 15.00');
    expect(domainFiguresLine(40, domainFigures({ eval_loss: 1 }))).toBeNull();
  });

  it("a batch's rows give each domain its weighted mean loss in the batch; batches count alike, as in eval_loss", () => {
    const T = 3;
    const batch = { B: 3, T, weights: [0, 1, 1, 0, 0.5, 0.5, 1, 1, 0] };
    const nll = [9, 2, 4, 9, 1, 3, 5, 7, 9];
    const m = new DomainMeans();
    addBatchLosses(m, batch, nll, ['web', 'mcp', 'web']);
    expect(m.metrics()).toEqual({ 'eval_loss/web': (2 + 4 + 5 + 7) / 4, 'eval_loss/mcp': (0.5 + 1.5) / 1 });
    // A second batch of web rows only, with another weight sum: the web figure is the mean of the two batches' means.
    addBatchLosses(m, { B: 1, T, weights: [1, 0, 0] }, [1, 0, 0], ['web']);
    expect(m.metrics()['eval_loss/web']).toBe((18 / 4 + 1) / 2);
    // A domain whose rows weigh nothing in a batch has no value from it.
    const none = new DomainMeans();
    addBatchLosses(none, { B: 1, T, weights: [0, 0, 0] }, [1, 2, 3], ['os']);
    expect(none.metrics()).toEqual({});
  });
});
