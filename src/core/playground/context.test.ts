import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../../envs/generate.ts';
import { BUILTIN_TEMPLATES } from '../templates/index.ts';
import { fitPrompt } from '../templates/fit.ts';
import { trainBpe } from '../tokenizer/index.ts';
import { contextReport, cutSummary, estimatedReport, overflows } from './context.ts';

const data = generateTrajectories('terminal', 3, 11);
const tok = trainBpe(
  data.flatMap((t) => [t.system_prompt.task_description, ...t.turns.flatMap((u) => [u.action, u.observation])]),
  { vocabSize: 400 },
);
const traj = data[0];
const request = { sample: { domain: 'terminal', systemPrompt: traj.system_prompt, history: traj.turns.slice(0, 3), action: traj.turns[3].action } };
const t = BUILTIN_TEMPLATES.v0;

describe('context report', () => {
  it('is the prompt the local backend gives the model, split into system, history and action', () => {
    const r = contextReport(tok, t, request, 4096, 64);
    expect(r.truncated).toBe(false);
    expect(cutSummary(r)).toBeNull();
    expect(r.prompt).toBe(fitPrompt(tok, t, request.sample, 4096 - 64).ids.length);
    expect(r.system + r.history + r.action).toBe(r.prompt);
    expect(r.history).toBeGreaterThan(0);
    expect(r.parts.filter((p) => p.group === 'history').map((p) => p.label)).toEqual(['turn 1', 'turn 2', 'turn 3']);
    expect(r.parts.every((p) => p.status === 'kept')).toBe(true);
  });

  it('says what the truncation policy cut when the prompt is longer than the context', () => {
    const r = contextReport(tok, t, request, 96, 24);
    expect(r.truncated).toBe(true);
    expect(r.prompt).toBeLessThanOrEqual(72);
    expect(r.prompt).toBe(fitPrompt(tok, t, request.sample, 72).ids.length);
    const out = r.parts.filter((p) => p.status !== 'kept').map((p) => p.label);
    expect(out).toContain('demonstrations');
    const text = cutSummary(r)!;
    expect(text).toContain(`The prompt needs ${r.full} tokens; 72 fit (context 96 − 24 max tokens)`);
    expect(text).toMatch(/left out .*demonstrations/);
    // The action is what the policy keeps first.
    expect(r.parts.find((p) => p.label === 'action')!.status).toBe('kept');
    expect(r.text).toContain(request.sample.action);
  });

  it('estimates an endpoint prompt and warns when it overflows the stated context', () => {
    const msgs = [
      { role: 'system', content: 'x'.repeat(400) },
      { role: 'user', content: 'ls' },
      { role: 'assistant', content: 'a b' },
      { role: 'user', content: 'pwd' },
    ];
    const r = estimatedReport(msgs, 100, 20);
    expect(r.exact).toBe(false);
    expect(r.system).toBe(104);
    expect(r.action).toBe(5);
    expect(overflows(r)).toBe(true);
    expect(cutSummary(r)).toMatch(/more than the 80 the endpoint's context of 100 leaves after 20 max tokens/);
    expect(cutSummary(estimatedReport(msgs, null, 20))).toBeNull();
  });
});
