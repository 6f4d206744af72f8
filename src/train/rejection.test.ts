import { describe, expect, it } from 'vitest';
import type { LwmBackend } from '../core/backend.ts';
import { generateTrajectories } from '../core/envs/generate.ts';
import { localJudge } from '../core/judge/rubric.ts';
import type { Judge } from '../core/judge/types.ts';
import { expandTurns } from '../core/turns/index.ts';
import { keptAsSamples, rejectionSample } from './rejection.ts';

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
  it('keeps the candidates the judge scores at or above the threshold and reports retention per domain', async () => {
    // Candidate 0 is exact (with a reasoning trace), candidate 1 is garbage.
    const backend = teacher((c, ref) => (c === 0 ? `<think>the file was written before</think>\n<predicted_observation>\n${ref}\n</predicted_observation>` : 'lorem ipsum lorem ipsum lorem ipsum'));
    const progress: number[] = [];
    const r = await rejectionSample(samples, backend, localJudge, { candidates: 2, threshold: 4, request }, (d) => progress.push(d));
    expect(backend.calls).toBe(10);
    expect(r.overall).toEqual({ kept: 5, total: 10, rate: 0.5, failed: 0 });
    expect(r.perDomain.terminal).toMatchObject({ kept: 3, total: 6 });
    expect(r.perDomain.mcp).toMatchObject({ kept: 2, total: 4 });
    expect(progress).toEqual([1, 2, 3, 4, 5]);
    expect(r.kept.every((k) => k.prediction === k.sample.targetObservation.trim() && k.reasoning === 'the file was written before')).toBe(true);
    const sft = keptAsSamples(r.kept);
    expect(sft[0].sample.targetObservation).toBe(r.kept[0].prediction);
    expect(sft[0].reasoning).toBe('the file was written before');
  });

  it("'best' keeps at most one per sample; a failed judgement is counted, never kept", async () => {
    const backend = teacher((_c, ref) => `<predicted_observation>\n${ref}\n</predicted_observation>`);
    const best = await rejectionSample(samples, backend, localJudge, { candidates: 3, keep: 'best', request });
    expect(best.overall.kept).toBe(5);
    expect(best.overall.total).toBe(15);
    const failing: Judge = { name: 'down', judge: async () => ({ failed: true, error: 'endpoint unreachable' }) };
    const none = await rejectionSample(samples.slice(0, 2), backend, failing, { candidates: 2, request });
    expect(none.overall).toEqual({ kept: 0, total: 4, rate: 0, failed: 4 });
    await expect(rejectionSample(samples, backend, localJudge, { threshold: 7 })).rejects.toThrow(/threshold must be within 1–5/);
  });
});
