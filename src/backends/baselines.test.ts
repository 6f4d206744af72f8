// The baselines behind the backend interface, driven by the benchmark runner: reference is the
// ceiling (every verifier check passes, the local judge scores it above copy-last), copy-last
// repeats the previous observation, and neither can serve a request without the turn's structure.
import { describe, expect, it } from 'vitest';
import { generateText } from '../core/backend.ts';
import { runBenchmark, sampleFromTurn, turnRequestOf } from '../core/bench/runner.ts';
import { generateTrajectories } from '../envs/generate.ts';
import { systemPromptToText } from '../core/formats/systemPromptText.ts';
import { localJudge } from '../core/judge/rubric.ts';
import { expandTurns } from '../core/turns/index.ts';
import { copyLastBackend, referenceBackend, taggedAnswer } from './baselines.ts';

describe('baselines', () => {
  const data = [...generateTrajectories('terminal', 2, 1), ...generateTrajectories('mcp', 2, 1)];
  const samples = expandTurns(data).map((t) => sampleFromTurn(t, systemPromptToText(t.systemPrompt), data.find((d) => d.id === t.trajectoryId)!.turns.length));

  it('answer from the turn: the previous observation (turn 1: the initial state), or the real one', async () => {
    const opts = { maxTokens: 8, temperature: 0 };
    const [first, second] = samples;
    expect(await generateText(copyLastBackend(), turnRequestOf(first), opts)).toBe(taggedAnswer(data[0].system_prompt.initial_state));
    expect(await generateText(copyLastBackend(), turnRequestOf(second), opts)).toBe(taggedAnswer(data[0].turns[0].observation));
    expect(await generateText(referenceBackend(), turnRequestOf(second), opts)).toBe(taggedAnswer(data[0].turns[1].observation));
    await expect(generateText(copyLastBackend(), { prompt: 'ls' }, opts)).rejects.toThrow('needs a turn request');
    await expect(generateText(referenceBackend(), { ...turnRequestOf(second), reference: undefined }, opts)).rejects.toThrow('real observation');
  });

  it('through the benchmark runner: reference passes every verifier check and outscores copy-last', async () => {
    const run = (backend: ReturnType<typeof copyLastBackend>) =>
      runBenchmark(samples, { backend, judge: localJudge, toRequest: turnRequestOf, generate: { maxTokens: 8, temperature: 0 } });
    const ref = await run(referenceBackend());
    const copy = await run(copyLastBackend());
    expect(ref.verifier.applicable).toBeGreaterThan(0);
    expect(ref.verifier.passed).toBe(ref.verifier.applicable);
    expect(ref.table.overall.verifier.rate).toBe(100);
    expect(ref.table.overall.total!).toBeGreaterThan(copy.table.overall.total!);
  });
});
