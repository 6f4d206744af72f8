import { describe, expect, it } from 'vitest';
import type { LwmBackend } from '../core/backend.ts';
import { generateTrajectories } from '../envs/generate.ts';
import { localJudge } from '../core/judge/rubric.ts';
import type { Judge } from '../core/judge/types.ts';
import { expandTurns } from '../core/turns/index.ts';
import { formatRetention, keptAsSamples, rejectionSample } from './rejection.ts';

const samples = [...expandTurns(generateTrajectories('terminal', 1, 4)).slice(0, 3), ...expandTurns(generateTrajectories('mcp', 1, 4)).slice(0, 2)];

const keyOf = (s: (typeof samples)[number]) => `${s.trajectoryId}#${s.turnIndex}`;
const request = (s: (typeof samples)[number]) => ({ prompt: keyOf(s) });

/** A teacher that answers candidate c of each sample by a fixed recipe, so the outcome is known. */
function teacher(recipe: (c: number, reference: string) => string): LwmBackend & { calls: number } {
  const b = {
    name: 'fake-teacher',
    calls: 0,
    async *generate(request: Parameters<LwmBackend['generate']>[0], options: Parameters<LwmBackend['generate']>[1]) {
      b.calls++;
      const key = 'prompt' in request ? request.prompt : '';
      const s = samples.find((x) => keyOf(x) === key)!;
      const c = (options.seed ?? 0) % 101;
      const text = recipe(c, s.targetObservation);
      for (let i = 0; i < text.length; i += 7) yield text.slice(i, i + 7); // streamed in pieces
    },
  };
  return b;
}

describe('rejection sampling', () => {
  it('reports retention for domains named after prototype keys without touching Object.prototype', async () => {
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    const renamed = samples.map((s, i) => ({ ...s, domain: ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'][i] }));
    const backend = teacher((_c, ref) => `<predicted_observation>\n${ref}\n</predicted_observation>`);
    const r = await rejectionSample(renamed, backend, localJudge, { candidates: 1, threshold: 1, request });
    expect(Object.keys(r.perDomain).sort()).toEqual(['__proto__', 'constructor', 'hasOwnProperty', 'toString', 'valueOf']);
    for (const d of Object.keys(r.perDomain)) expect(r.perDomain[d]).toMatchObject({ kept: 1, total: 1 });
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(before);
  });
  it('keeps the candidates the judge scores at or above the threshold and reports retention per domain', async () => {
    // Candidate 0 is exact (with a reasoning trace), candidate 1 is garbage.
    const backend = teacher((c, ref) =>
      c === 0 ? `<think>the file was written before</think>\n<predicted_observation>\n${ref}\n</predicted_observation>` : 'lorem ipsum lorem ipsum lorem ipsum',
    );
    const progress: number[] = [];
    const r = await rejectionSample(samples, backend, localJudge, { candidates: 2, threshold: 4, request }, (d) => progress.push(d));
    expect(backend.calls).toBe(10);
    expect(r.overall).toEqual({ kept: 5, rejected: 5, failed: 0, judged: 10, total: 10, rate: 0.5 });
    expect(r.perDomain.terminal).toMatchObject({ kept: 3, rejected: 3, total: 6 });
    expect(r.perDomain.mcp).toMatchObject({ kept: 2, rejected: 2, total: 4 });
    expect(progress).toEqual([1, 2, 3, 4, 5]);
    expect(r.kept.every((k) => k.prediction === k.sample.targetObservation.trim() && k.reasoning === 'the file was written before')).toBe(true);
    const sft = keptAsSamples(r.kept);
    expect(sft[0].sample.targetObservation).toBe(r.kept[0].prediction);
    expect(sft[0].reasoning).toBe('the file was written before');
  });

  it("'best' keeps at most one per sample; a failed judgement is counted, never kept", async () => {
    const backend = teacher((_c, ref) => `<predicted_observation>\n${ref}\n</predicted_observation>`);
    const best = await rejectionSample(samples, backend, localJudge, { candidates: 3, keep: 'best', request });
    // Three candidates pass per turn; 'best' keeps one and the other two count as rejected.
    expect(best.overall).toMatchObject({ kept: 5, rejected: 10, failed: 0, judged: 15, total: 15 });
    const failing: Judge = { name: 'down', judge: async () => ({ failed: true, error: 'endpoint unreachable' }) };
    const none = await rejectionSample(samples.slice(0, 2), backend, failing, { candidates: 2, request });
    expect(none.overall).toEqual({ kept: 0, rejected: 0, failed: 4, judged: 0, total: 4, rate: 0 });
    await expect(rejectionSample(samples, backend, localJudge, { threshold: 7 })).rejects.toThrow(/threshold must be within 1–5/);
  });

  it('counts judge failures apart from rejections: the rate is kept over judged', async () => {
    // Candidate 0 exact, candidate 1 garbage (rejected), candidate 2 one the judge cannot judge.
    const backend = teacher((c, ref) =>
      c === 0 ? `<predicted_observation>\n${ref}\n</predicted_observation>` : c === 1 ? 'lorem ipsum lorem ipsum' : 'JUDGE-FAILS-ON-THIS',
    );
    const flaky: Judge = {
      name: 'flaky',
      judge: async (input) => (input.prediction.includes('JUDGE-FAILS') ? { failed: true, error: 'no verdict' } : localJudge.judge(input)),
    };
    const weights = new Map(samples.map((s, i) => [keyOf(s), [1, 0.05, 0.6, 0.1, 0.8][i]]));
    const r = await rejectionSample(samples, backend, flaky, { candidates: 3, threshold: 4, request, weightOf: (s) => weights.get(keyOf(s))! });
    expect(r.overall).toEqual({ kept: 5, rejected: 5, failed: 5, judged: 10, total: 15, rate: 0.5 });
    expect(r.perDomain.terminal).toEqual({ kept: 3, rejected: 3, failed: 3, judged: 6, total: 9, rate: 0.5 });
    // Before, failures were counted in the denominator: 5 of 15 (33.3%) instead of 5 of 10.
    expect(formatRetention(r.overall)).toBe('5 of 10 kept, 50.0% (5 judge failures left out)');
    // Each kept label carries its turn's mask weight into SFT.
    expect(keptAsSamples(r.kept).map((l) => l.weight)).toEqual([1, 0.05, 0.6, 0.1, 0.8]);
  });

  it('formats retention as the method reports it', () => {
    expect(formatRetention({ kept: 7094, rejected: 3156, failed: 0, judged: 10250, total: 10250, rate: 7094 / 10250 })).toBe('7,094 of 10,250 kept, 69.2%');
  });
});
