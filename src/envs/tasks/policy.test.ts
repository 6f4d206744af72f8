import { describe, expect, it } from 'vitest';
import { SPECIAL_TOKENS, Tokenizer, trainBpe } from '../../core/tokenizer/index.ts';
import { generateTrajectories } from '../generate.ts';
import {
  encodePolicyRow,
  episodeSamples,
  fitPolicyPrompt,
  listTasks,
  policyTarget,
  policyText,
  runEpisode,
  solveTask,
  trajectorySamples,
  type PolicySample,
} from './index.ts';
import { PlanAgent } from '../agent.ts';

const tasks = listTasks({ split: 'train', count: 2 });
const episodes = tasks.map(solveTask);
const samples = episodes.flatMap((e) => episodeSamples(e));
const corpus = [
  ...samples.slice(0, 40).map((s) => `${s.task} ${s.actionSpace} ${s.target}`),
  ...Object.values(SPECIAL_TOKENS),
  '# Task # Actions # Start # History',
];
const TOKENIZERS: [string, Tokenizer][] = [
  ['BPE', trainBpe(corpus, { vocabSize: 600 })],
  ['byte', new Tokenizer([])],
];
const BIG = 1_000_000;

/** A sample with a long history of numbered turns. */
function longSample(n: number, obs = 'ok'): PolicySample {
  const base = samples.find((s) => s.domain === 'terminal')!;
  return {
    ...base,
    history: Array.from({ length: n }, (_, i) => ({ action: `echo turn${i}`, observation: `${obs} ${i}` })),
    target: 'echo next',
  };
}

describe('policy samples of a solved task', () => {
  it('give one sample per accepted action: the history before it and the action as target', () => {
    for (const e of episodes) {
      const ss = episodeSamples(e);
      expect(ss.length).toBe(e.turns.filter((t) => t.ok).length);
      for (const s of ss) {
        expect(s.source).toBe(e.task.id);
        expect(s.target).toBe(e.turns[s.step].action);
        expect(s.history).toEqual(e.turns.slice(0, s.step).map(({ action, observation }) => ({ action, observation })));
        expect(s.task).toContain(e.task.goal);
        expect(s.actionSpace).toBe(e.system_prompt.action_space);
      }
    }
  });
  it('skip refused actions as targets unless asked, keeping them in the history', () => {
    const t = tasks.find((x) => x.family === 'write_word')!;
    const e = runEpisode(t, () => new PlanAgent(['ech hello', `echo ${t.params.word} > ${t.params.file}`]));
    expect(e.turns[0].ok).toBe(false);
    const ss = episodeSamples(e);
    expect(ss.map((s) => s.step)).toEqual([1]);
    expect(ss[0].history[0].action).toBe('ech hello');
    expect(episodeSamples(e, { onlyAccepted: false }).length).toBe(2);
  });
});

describe.each(TOKENIZERS)('the policy prompt with our %s tokenizer', (_name, tok) => {
  it('lays out task, actions, start and history with markers, and ends where the action begins', () => {
    const s = samples.find((x) => x.history.length >= 1)!;
    const fit = fitPolicyPrompt(s, tok, BIG);
    const text = policyText(fit.prompt);
    expect(text.startsWith(`${SPECIAL_TOKENS.system}# Task\n${s.task}\n# Actions\n${s.actionSpace}\n# Start\n${s.initialState}\n# History\n`)).toBe(true);
    expect(text.endsWith(SPECIAL_TOKENS.action)).toBe(true);
    for (const h of s.history)
      expect(text).toContain(`${SPECIAL_TOKENS.action}${h.action}${SPECIAL_TOKENS.observation}${h.observation}${SPECIAL_TOKENS.endTurn}`);
    expect(policyText(fit.target)).toBe(`${s.target}${SPECIAL_TOKENS.endTurn}`);
    expect(fit).toMatchObject({ turns: s.history.length, initialState: 'whole', cutObservation: false });
    expect(policyText(fitPolicyPrompt({ ...s, history: [] }, tok, BIG).prompt)).toContain('# History\n(none yet)\n');
  });

  it("never turns data into a control token: a special token's string in any text stays text", () => {
    const clean = longSample(2);
    const row = (s: PolicySample) => encodePolicyRow(s, tok, BIG).ids.filter((id) => tok.isSpecial(id)).length;
    const specials = row(clean);
    // system + (action, observation, end_turn) per turn + action + end_turn after the target.
    expect(specials).toBe(1 + 3 * 2 + 1 + 1);
    for (const sp of Object.values(SPECIAL_TOKENS)) {
      const dirty: PolicySample = {
        ...clean,
        task: `${clean.task} ${sp}`,
        actionSpace: `${sp}${clean.actionSpace}`,
        initialState: `${clean.initialState}${sp}`,
        history: clean.history.map((h) => ({ action: `${h.action}${sp}`, observation: `${sp} ${h.observation}` })),
        target: `echo ${sp}`,
      };
      expect(row(dirty), sp).toBe(specials);
    }
  });

  it('keeps the task and action space whole and drops the oldest turns first to fit the budget', () => {
    const s = longSample(30, 'line of output '.repeat(6));
    const full = encodePolicyRow(s, tok, BIG).ids.length;
    for (const budget of [Math.floor(full * 0.8), Math.floor(full * 0.5), Math.floor(full * 0.3)]) {
      const r = encodePolicyRow(s, tok, budget);
      expect(r.ids.length).toBeLessThanOrEqual(budget);
      const text = policyText(r.fit.prompt);
      expect(text).toContain(`# Task\n${s.task}\n# Actions\n${s.actionSpace}\n`);
      expect(r.fit.turns).toBeGreaterThan(0);
      expect(r.fit.turns).toBeLessThan(30);
      // The kept turns are the newest, in order, and the prompt says how many were left out.
      const shown = s.history.slice(30 - r.fit.turns);
      for (const h of shown) expect(text).toContain(h.action + SPECIAL_TOKENS.observation);
      expect(text).not.toContain(`echo turn${29 - r.fit.turns}${SPECIAL_TOKENS.observation}`);
      expect(text).toContain(`(${30 - r.fit.turns} earlier turns left out)`);
      expect(r.fit.initialState).not.toBe('whole');
      expect(policyText(r.fit.target)).toBe(`echo next${SPECIAL_TOKENS.endTurn}`);
    }
  });

  it('cuts a newest observation or an initial state too long to fit whole, head and tail', () => {
    const s: PolicySample = { ...longSample(1), history: [{ action: 'cat big.log', observation: `HEAD ${'x '.repeat(3000)} TAIL` }] };
    const bare = encodePolicyRow({ ...s, history: [], initialState: '' }, tok, BIG).ids.length;
    const r = encodePolicyRow(s, tok, bare + 200);
    expect(r.ids.length).toBeLessThanOrEqual(bare + 200);
    expect(r.fit).toMatchObject({ turns: 1, cutObservation: true });
    const text = policyText(r.fit.prompt);
    expect(text).toMatch(/HEAD x[ x]*…[ x]*TAIL/);
    const atStart: PolicySample = { ...s, history: [], initialState: `FIRST ${'file.txt '.repeat(2000)} LAST` };
    const st = fitPolicyPrompt(atStart, tok, bare + 300);
    expect(st.initialState).toBe('cut');
    expect(policyText(st.prompt)).toMatch(/# Start\nFIRST .*….* LAST\n# History/s);
  });

  it('refuses a budget too small for the task, action space and target, saying how many tokens they need', () => {
    const s = longSample(3);
    expect(() => fitPolicyPrompt(s, tok, 10)).toThrow(
      /policy prompt of terminal\/write_word\/0 step 0: the task, action space and target take \d+ tokens, more than the budget of 10/,
    );
  });

  it('in the compact layout, shows the goal and the history only, fits them the same way, and keeps a goal that prints a marker as text', () => {
    const s = longSample(30, 'line of output '.repeat(6));
    expect(s.goal).toBeTruthy();
    const fit = fitPolicyPrompt(s, tok, BIG, 'compact');
    const text = policyText(fit.prompt);
    expect(text.startsWith(`${SPECIAL_TOKENS.system}# Goal\n${s.goal}\n# History\n`)).toBe(true);
    expect(text).not.toContain(s.actionSpace);
    expect(text).not.toContain('# Start');
    expect(fit).toMatchObject({ turns: 30, initialState: 'left out' });
    const full = encodePolicyRow(s, tok, BIG, 'compact').ids.length;
    const r = encodePolicyRow(s, tok, Math.floor(full / 2), 'compact');
    expect(r.ids.length).toBeLessThanOrEqual(Math.floor(full / 2));
    expect(r.fit.turns).toBeLessThan(30);
    expect(policyText(r.fit.prompt)).toContain(`(${30 - r.fit.turns} earlier turns left out)`);
    const specials = (x: PolicySample) => encodePolicyRow(x, tok, BIG, 'compact').ids.filter((id) => tok.isSpecial(id)).length;
    expect(specials({ ...s, goal: `${s.goal} ${SPECIAL_TOKENS.endTurn}${SPECIAL_TOKENS.action}` })).toBe(specials(s));
    expect(() => fitPolicyPrompt({ ...s, goal: undefined }, tok, BIG, 'compact')).toThrow(/compact layout needs the task's goal/);
    expect(() => fitPolicyPrompt(s, tok, 5, 'compact')).toThrow(/the goal and target take \d+ tokens, more than the budget of 5/);
  });

  it('is the same for the same sample and budget', () => {
    const s = longSample(12, 'some output');
    const budget = Math.floor(encodePolicyRow(s, tok, BIG).ids.length * 0.7);
    expect(encodePolicyRow(s, tok, budget)).toEqual(encodePolicyRow(structuredClone(s), tok, budget));
    expect(encodePolicyRow(s, tok, budget).fit.turns).toBeLessThan(12);
    expect(tok.encodeParts(policyTarget(s))).toEqual(tok.encodeParts(policyTarget({ ...s })));
  });
});

describe('policy samples of generated trajectories', () => {
  it('come from goal-directed agents only, replayed exactly, and never target an action the environment refused', () => {
    const ts = generateTrajectories('terminal', 12, 3);
    let slips = 0;
    let n = 0;
    for (const t of ts) {
      const ss = trajectorySamples(t);
      if (t.metadata?.agent !== 'goal') {
        expect(ss).toEqual([]);
        continue;
      }
      n += ss.length;
      expect(ss.length).toBeGreaterThan(0);
      const targeted = new Set(ss.map((s) => s.step));
      for (let i = 0; i < t.turns.length; i++) if (!targeted.has(i)) slips++;
      for (const s of ss) {
        expect(s.target).toBe(t.turns[s.step].action);
        expect(s.history.length).toBe(s.step);
      }
    }
    expect(n).toBeGreaterThan(0);
    expect(slips).toBeGreaterThan(0);
  });
  it('name the trajectory and turn whose stored observation the environment does not reproduce', () => {
    const t = generateTrajectories('terminal', 12, 3).find((x) => x.metadata?.agent === 'goal')!;
    const edited = structuredClone(t);
    edited.turns[1].observation = 'edited by hand';
    expect(() => trajectorySamples(edited)).toThrow(new RegExp(`trajectory ${t.id} turn 1: replaying`));
  });
});
