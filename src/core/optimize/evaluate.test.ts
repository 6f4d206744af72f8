import { describe, expect, it } from 'vitest';
import type { GenerateRequest, LwmBackend } from '../backend.ts';
import { benchSampleRecords } from '../bench/eval-turns.ts';
import { defaultRequest, sampleFromRecord, type BenchSample } from '../bench/runner.ts';
import { generateTrajectories } from '../envs/generate.ts';
import { localJudge } from '../judge/rubric.ts';
import { benchEvaluator, splitForOptimisation } from './evaluate.ts';
import { newLoopState, runOptimisation } from './loop.ts';
import { offlineOptimiser } from './optimisers.ts';

const trajectories = [...generateTrajectories('terminal', 30, 3), ...generateTrajectories('mcp', 30, 3)];
const samples = benchSampleRecords(trajectories, { evalFraction: 0.5, seed: 1 }).map(sampleFromRecord);

describe('splitForOptimisation', () => {
  const o = { devPerDomain: 6, testPerDomain: 4, seed: 9 };
  it('fills each domain, and no trajectory is on both sides', () => {
    const { dev, test } = splitForOptimisation(samples, o);
    for (const d of ['terminal', 'mcp']) {
      expect(dev.filter((s) => s.domain === d)).toHaveLength(6);
      expect(test.filter((s) => s.domain === d)).toHaveLength(4);
    }
    const devTraj = new Set(dev.map((s) => String(s.record!.id)));
    expect(test.some((s) => devTraj.has(String(s.record!.id)))).toBe(false);
  });
  it('does not depend on the input order', () => {
    const key = (xs: BenchSample[]) => xs.map((s) => `${s.id}#${s.turnIdx}`).sort();
    const a = splitForOptimisation(samples, o);
    const b = splitForOptimisation([...samples].reverse(), o);
    expect(key(b.dev)).toEqual(key(a.dev));
    expect(key(b.test)).toEqual(key(a.test));
  });
});

/** A simulator that answers with the real observation when its system prompt asks it not to invent, and with the last observation otherwise. */
function obedientSimulator(): LwmBackend {
  return {
    name: 'obedient',
    async *generate(request: GenerateRequest) {
      const r = request as unknown as { system: string; reference: string; last: string };
      yield `<predicted_observation>${/never invent/i.test(r.system) ? r.reference : r.last}</predicted_observation>`;
    },
  };
}

describe('the loop on generated trajectories with the local judge', () => {
  it('runs 3 rounds deterministically and finds the instruction that helps', async () => {
    const splits = splitForOptimisation(samples, { devPerDomain: 5, testPerDomain: 3, seed: 2 });
    const render = (text: string, s: BenchSample) => {
      const req = defaultRequest(s);
      return { ...req, system: `${text}\n${s.system}`, reference: s.reference, last: s.history.at(-1)?.observation ?? "" } as unknown as GenerateRequest;
    };
    const run = async () => {
      const evaluate = benchEvaluator({ backend: obedientSimulator(), judge: localJudge, splits, render, generate: { maxTokens: 64, temperature: 0 } });
      const config = { rounds: 3, candidates: 3, margin: 0, level: 0.95, seed: 1, devSize: splits.dev.length, testSize: splits.test.length };
      return runOptimisation({ optimiser: offlineOptimiser(), evaluate, validate: () => [] }, newLoopState(config), { text: 'You simulate {{ domain }}.\n{{ simulation_instruction }}', note: 'start' });
    };
    const s = await run();
    expect(s.stopped).toBe('done');
    expect(s.rounds.map((r) => r.round)).toEqual([1, 2, 3]);
    const best = s.versions.find((v) => v.id === s.best)!;
    expect(best.text).toMatch(/Never invent/);
    expect(best.mean!).toBeGreaterThan(s.versions[0].mean! + 10);
    expect(s.test!.mean!).toBeGreaterThan(50);
    expect(JSON.parse(JSON.stringify(await run()))).toEqual(JSON.parse(JSON.stringify(s)));
  });
});
