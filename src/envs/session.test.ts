import { describe, expect, it } from 'vitest';
import { copyLastObservation, taggedAnswer } from '../backends/baselines.ts';
import { createEnv } from './index.ts';
import { rubricJudge } from '../core/judge/rubric.ts';
import { reward } from '../core/judge/reward.ts';
import { verify } from '../core/judge/verifier.ts';
import { validateTrajectory } from '../core/schema/validate.ts';
import {
  addTurn,
  judgeContext,
  branchAt,
  clearFrom,
  fedHistory,
  gradeTurn,
  newSession,
  pendingTurns,
  realObservations,
  sessionSummary,
  sessionTrajectory,
  setField,
  setPrediction,
  suggestAction,
  switchBranch,
  turnRequest,
  verifierHighlights,
  type Session,
  type World,
} from './session.ts';

const world: World = { kind: 'env', domain: 'terminal', seed: 7 };
const meta = { backend: 'test', tokens: 3, ms: 10 };

/** Plays `actions`, predicting each turn with `predict(real observation)`. */
function play(s: Session, actions: string[], predict: (real: string, i: number) => string): Session {
  for (const a of actions) {
    s = addTurn(s, a);
    const i = s.turns.length - 1;
    s = setPrediction(s, i, taggedAnswer(predict(s.turns[i].real!.observation, i)), meta);
  }
  return s;
}

describe('playground session', () => {
  it("starts from the environment's own system prompt and replays it for real observations", () => {
    const s = newSession(world);
    const env = createEnv('terminal');
    expect(s.systemPrompt).toEqual(env.reset(7).system_prompt);
    const real = realObservations(world, ['pwd', 'ls']);
    expect(real.map((r) => r.observation)).toEqual([env.step('pwd').observation, env.step('ls').observation]);
    expect(real[1].spans.length).toBeGreaterThan(0);
    const s2 = addTurn(addTurn(s, 'pwd'), 'ls');
    expect(s2.turns.map((t) => t.real!.observation)).toEqual(real.map((r) => r.observation));
    expect(pendingTurns(s2)).toEqual([0, 1]);
  });

  it('suggests valid actions from the scripted agent, and none in a free world', () => {
    const first = suggestAction(world, []);
    expect(first).toBeTruthy();
    const s = play(newSession(world), [first!], (r) => r);
    const second = suggestAction(
      world,
      s.turns.map((t) => t.action),
    );
    expect(second).toBeTruthy();
    // Long sessions still get a suggestion (the random agent takes over when the plan is done).
    const many = Array.from({ length: 30 }, () => 'pwd');
    expect(suggestAction(world, many)).toBeTruthy();
    expect(suggestAction({ kind: 'free', domain: 'game' }, [])).toBeNull();
  });

  it('feeds the real observations under teacher forcing and its own predictions when free running', () => {
    let s = play(newSession(world), ['pwd', 'ls'], (_, i) => `guess ${i}`);
    s = addTurn(s, 'ls -a');
    const teacher = turnRequest(s, 2);
    expect(teacher.sample.history.map((h) => h.observation)).toEqual([s.turns[0].real!.observation, s.turns[1].real!.observation]);
    expect(teacher.reference).toBe(s.turns[2].real!.observation);
    const free = turnRequest({ ...s, mode: 'free' }, 2);
    expect(free.sample.history.map((h) => h.observation)).toEqual(['guess 0', 'guess 1']);
    expect(free.sample.action).toBe('ls -a');
    // Copy-last under free running repeats its own last guess, under teacher forcing the real one.
    expect(copyLastObservation(free)).toBe('guess 1');
    expect(copyLastObservation(teacher)).toBe(s.turns[1].real!.observation);
    // A free world has no real observations: it always runs free.
    let f = newSession({ kind: 'free', domain: 'game' }, 'teacher');
    expect(f.mode).toBe('free');
    f = setField(f, 'task_description', 'a text adventure');
    f = addTurn(f, 'look');
    expect(f.turns[0].real).toBeNull();
    f = setPrediction(f, 0, taggedAnswer('A dark room.'), meta);
    expect(f.turns[0].grade).toBeNull();
    f = addTurn(f, 'go north');
    expect(fedHistory(f, 1)).toEqual([{ action: 'look', observation: 'A dark room.' }]);
    expect(turnRequest(f, 1).sample.systemPrompt.task_description).toBe('a text adventure');
  });

  it('grades each turn as RL does: rubric judge, verifier on the deterministic region, 0.9/0.1 reward', () => {
    const s = play(newSession(world), ['pwd', 'ls'], (real, i) => (i === 0 ? real : 'no such file'));
    const [exact, wrong] = s.turns.map((t) => t.grade!);
    expect(exact.verdict.scores).toEqual({ format: 5, factuality: 5, consistency: 5, realism: 5, quality: 5 });
    expect(exact.verifier.pass).toBe(true);
    expect(exact.reward.reward).toBeCloseTo(25);
    // The same numbers the RL reward computes from the same judge input.
    const t = s.turns[1];
    const input = {
      domain: 'terminal',
      history: [{ action: 'pwd', observation: s.turns[0].real!.observation }],
      action: 'ls',
      prediction: 'no such file',
      reference: t.real!.observation,
      spans: t.real!.spans,
    };
    const v = verify(input);
    expect(wrong.verifier.pass).toBe(v.pass);
    expect(wrong.verifier.pass).toBe(false);
    expect(wrong.verdict.scores).toEqual(rubricJudge({ ...input, context: judgeContext(s) }).scores);
    expect(wrong.reward).toEqual(reward(wrong.verdict.scores, false));
    expect(wrong.reward.reward).toBeLessThan(exact.reward.reward);
    // The deterministic region: matched in the exact turn (same place in both texts), mismatched in the wrong one.
    expect(exact.highlights.reference.length).toBeGreaterThan(0);
    expect(exact.highlights.reference.every((h) => h.status === 'match')).toBe(true);
    expect(exact.highlights.prediction.map((h) => [h.start, h.end])).toEqual(exact.highlights.reference.map((h) => [h.start, h.end]));
    expect(wrong.highlights.reference.some((h) => h.status === 'mismatch')).toBe(true);
    expect(wrong.highlights.prediction).toEqual([]);
    const summary = sessionSummary(s)!;
    expect(summary.graded).toBe(2);
    expect(summary.verifierPass).toBe(0.5);
  });

  it('locates regions in order and marks the ones after the first failure unchecked', () => {
    const v = {
      pass: false,
      applicable: true,
      rule: 'spans',
      regions: [
        { label: 'a', expected: 'alpha' },
        { label: 'b', expected: 'beta' },
        { label: 'c', expected: 'gamma' },
      ],
    };
    const h = verifierHighlights({ ...v, failure: { region: v.regions[1], reason: 'missing' } }, 'alpha x beta y gamma', 'alpha z');
    expect(h.reference.map((x) => [x.start, x.end, x.status])).toEqual([
      [0, 5, 'match'],
      [8, 12, 'mismatch'],
      [15, 20, 'unchecked'],
    ]);
    expect(h.prediction.map((x) => [x.start, x.end, x.status])).toEqual([[0, 5, 'match']]);
  });

  it('keeps the stopped or failed text, and leaves a failed turn pending and ungraded', () => {
    let s = addTurn(newSession(world), 'ls');
    s = setPrediction(s, 0, '<predicted_observation>\npart', { ...meta, error: 'The GPU device was lost' });
    expect(s.turns[0].prediction!.observation).toBe('part');
    expect(s.turns[0].grade).toBeNull();
    expect(pendingTurns(s)).toEqual([0]);
    s = setPrediction(s, 0, '<predicted_observation>\npart', { ...meta, stopped: true });
    expect(s.turns[0].grade).not.toBeNull();
    expect(pendingTurns(s)).toEqual([]);
  });

  it('branches at an edited action: earlier turns kept, the branch replayed, the old one kept to go back to', () => {
    const s = play(newSession(world), ['pwd', 'ls', 'cat notes.txt'], (r) => r);
    const b = branchAt(s, 1, 'ls -la');
    expect(b.turns.map((t) => t.action)).toEqual(['pwd', 'ls -la', 'cat notes.txt']);
    expect(b.turns[0]).toEqual(s.turns[0]);
    expect(b.turns[1].prediction).toBeNull();
    expect(b.turns[2].prediction).toBeNull();
    expect(pendingTurns(b)).toEqual([1, 2]);
    expect(b.turns[1].real!.observation).toBe(realObservations(world, ['pwd', 'ls -la'])[1].observation);
    expect(b.turns[1].real!.observation).not.toBe(s.turns[1].real!.observation);
    expect(b.branches).toHaveLength(1);
    expect(b.branches[0].turns).toBe(s.turns);
    // Dropping the later actions.
    expect(branchAt(s, 1, 'ls -la', false).turns.map((t) => t.action)).toEqual(['pwd', 'ls -la']);
    // Going back swaps the branches.
    const back = switchBranch(b, 0);
    expect(back.turns).toBe(s.turns);
    expect(back.branches[0].turns).toBe(b.turns);
    // Changing the mode or backend re-runs from a turn.
    expect(pendingTurns(clearFrom(s, 2))).toEqual([2]);
  });

  it('saves as a valid trajectory: real observations with spans, the prediction and grade in metadata', () => {
    const s = play(newSession(world), ['pwd', 'ls'], (r, i) => (i ? 'x' : r));
    const t = sessionTrajectory(s, 'play-1', Date.UTC(2026, 0, 1));
    expect(validateTrajectory(t)).toEqual([]);
    expect(t.turns.map((x) => x.observation)).toEqual(s.turns.map((x) => x.real!.observation));
    expect(t.turns[1].metadata).toMatchObject({ prediction: 'x', verifier_pass: false, source: 'playground' });
    expect(t.turns[1].metadata!.spans).toEqual(s.turns[1].real!.spans);
    expect(t.source).toEqual({ format: 'playground' });
    // A free world's observations are the model's.
    let f = addTurn(newSession({ kind: 'free', domain: 'game' }), 'look');
    f = setPrediction(f, 0, taggedAnswer('A dark room.'), meta);
    f = addTurn(f, 'unanswered');
    const ft = sessionTrajectory(f, 'play-2', 0);
    expect(validateTrajectory(ft)).toEqual([]);
    expect(ft.turns).toEqual([{ action: 'look', observation: 'A dark room.', metadata: { source: 'playground' } }]);
  });

  it('grades nothing without a prediction', () => {
    expect(gradeTurn(addTurn(newSession(world), 'ls'), 0)).toBeNull();
  });
});
