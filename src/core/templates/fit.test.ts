// The truncation policy (docs/method.md §11) on crafted cases, with a byte-level tokenizer (no merges: one
// token per byte, one per special token) so every budget below is exact.
import { describe, expect, it } from 'vitest';
import { emptySystemPrompt, type SystemPrompt } from '../schema/types.ts';
import { SPECIAL_TOKENS, Tokenizer } from '../tokenizer/index.ts';
import type { TurnSample } from '../turns/index.ts';
import { ELISION, fitContext, fitPrompt, fitTurn } from './fit.ts';
import { renderSample, sampleLayout } from './index.ts';
import { fromLegacy, type LegacyPromptTemplate } from './legacy.ts';

const S = SPECIAL_TOKENS;
const tok = new Tokenizer([]);
const len = (s: string) => tok.encode(s, { allowSpecial: true }).length;
const text = (ids: number[]) => tok.decode(ids);

/** Fields in the schema's order, headings of three bytes, bare turn markers. */
const L: LegacyPromptTemplate = {
  version: 't',
  description: 'test',
  preamble: 'PREAMBLE',
  sections: [
    { field: 'task_description', heading: 'TD:' },
    { field: 'action_space', heading: 'AS:' },
    { field: 'initial_state', heading: 'IS:' },
    { field: 'demonstrations', heading: 'DM:' },
    { field: 'simulation_instruction', heading: 'SI:' },
  ],
  closing: 'CLOSING',
  historyTurn: `${S.action}{{action}}${S.observation}{{observation}}${S.endTurn}`,
  currentAction: `${S.action}{{action}}${S.observation}`,
  targetOpen: S.predictedOpen,
  targetClose: S.predictedClose,
};
const T = fromLegacy(L);

const system: SystemPrompt = {
  task_description: 'task: archive the logs',
  action_space: 'actions: ls cd mv rm mkdir',
  initial_state: 'state: cwd /home/dev, files a.log b.log',
  demonstrations: 'demo: ls -> a.log b.log (a long example)',
  simulation_instruction: 'rules: print what bash prints',
};
const sample: TurnSample = {
  trajectoryId: 'x',
  domain: 'terminal',
  turnIndex: 3,
  systemPrompt: system,
  history: [
    { action: 'first-act', observation: 'first-obs' },
    { action: 'second-act', observation: 'second-obs' },
    { action: 'third-act', observation: 'third-obs' },
  ],
  action: 'mv a.log archive/',
  targetObservation: 'done',
};

/** The full render of a sample with only some system fields and the newest `turns` turns (the oracle: what a cut must look like). */
function reduced(fields: (keyof SystemPrompt)[], turns: number, t: LegacyPromptTemplate = L): string {
  const sp = { ...emptySystemPrompt() };
  for (const f of fields) sp[f] = system[f]!;
  return renderSample(fromLegacy(t), { ...sample, systemPrompt: sp, history: sample.history.slice(sample.history.length - turns) }).text;
}
const sectionCost = (f: keyof SystemPrompt, heading: string) => len(`${heading}\n${system[f]}`) + len('\n\n');

describe('the truncation policy', () => {
  const full = len(renderSample(T, sample).text);

  it('keeps everything when it fits, in exactly the layout of renderSample', () => {
    const f = fitTurn(tok, T, sample, { budget: full });
    expect(text(f.ids)).toBe(renderSample(T, sample).text);
    expect(f.truncated).toBe(false);
    expect(f.coverage).toEqual({ system: 1, turns: 1, initialState: 1, target: 1, historyTurns: 3, keptTurns: 3 });
  });

  it('gives up parts in reverse priority: demonstrations, action space, task, closing, preamble, instruction, oldest turns, the state', () => {
    const none = { ...L, preamble: '', closing: '' };
    // Each step frees exactly one part's tokens; the render without that part is the expected text.
    const steps: { drop: number; text: string }[] = [];
    let budget = full;
    budget -= sectionCost('demonstrations', 'DM:');
    steps.push({ drop: budget, text: reduced(['task_description', 'action_space', 'initial_state', 'simulation_instruction'], 3) });
    budget -= sectionCost('action_space', 'AS:');
    steps.push({ drop: budget, text: reduced(['task_description', 'initial_state', 'simulation_instruction'], 3) });
    budget -= sectionCost('task_description', 'TD:');
    steps.push({ drop: budget, text: reduced(['initial_state', 'simulation_instruction'], 3) });
    budget -= len('CLOSING\n\n');
    steps.push({ drop: budget, text: reduced(['initial_state', 'simulation_instruction'], 3, { ...L, closing: '' }) });
    budget -= len('PREAMBLE\n\n');
    steps.push({ drop: budget, text: reduced(['initial_state', 'simulation_instruction'], 3, none) });
    budget -= sectionCost('simulation_instruction', 'SI:');
    steps.push({ drop: budget, text: reduced(['initial_state'], 3, none) });
    budget -= len(`${S.action}first-act${S.observation}first-obs${S.endTurn}`);
    steps.push({ drop: budget, text: reduced(['initial_state'], 2, none) });
    budget -= len(`${S.action}second-act${S.observation}second-obs${S.endTurn}`);
    steps.push({ drop: budget, text: reduced(['initial_state'], 1, none) });
    budget -= len(`${S.action}third-act${S.observation}third-obs${S.endTurn}`);
    steps.push({ drop: budget, text: reduced(['initial_state'], 0, none) });
    budget -= len(`IS:\n${system.initial_state}`); // the only system part left: no separator
    steps.push({ drop: budget, text: reduced([], 0, none) });
    for (const s of steps) expect(text(fitTurn(tok, T, sample, { budget: s.drop }).ids), `budget ${s.drop}`).toBe(s.text);
  });

  it('elides a part that does not fit whole: head and tail around the marker, under its heading', () => {
    // The state and the newest turn fit; the next turn gets 12 tokens less than it needs.
    const base = len(reduced(['initial_state'], 1, { ...L, preamble: '', closing: '' }));
    const second = len(`${S.action}second-act${S.observation}second-obs${S.endTurn}`);
    const f = fitTurn(tok, T, sample, { budget: base + second - 6 });
    const out = text(f.ids);
    expect(out).toContain(`${S.endTurn}${S.action}third-act`);
    const turn = f.segments.find((s) => s.part === 'turn' && s.turn === 1)!;
    expect(turn.elided).toBe(true);
    expect(text(turn.ids)).toMatch(new RegExp(`^${S.action.replace(/\|/g, '\\|')}sec.*${ELISION}.*${S.endTurn.replace(/\|/g, '\\|')}$`));
    expect(out).not.toContain('first-act');
    expect(f.ids.length).toBeLessThanOrEqual(base + second - 6);
    expect(f.droppedTurns).toBe(2);
    expect(f.coverage.keptTurns).toBe(1);
    // The state elided: its heading stays, then the head and the tail of the value.
    const g = fitTurn(tok, T, sample, { budget: len(reduced([], 0, { ...L, preamble: '', closing: '' })) + 30 });
    const state = g.segments.find((s) => s.part === 'initial_state')!;
    // 30 tokens: the heading (4), the marker (3), two thirds of the other 23 from the head, the rest from the tail.
    // The part lays out with the newline that ends it in the template.
    expect(text(state.ids)).toBe(`IS:\nstate: cwd /home${ELISION}g b.log\n`);
    expect(g.coverage.initialState).toBeCloseTo((30 - len('IS:\n') - len(ELISION)) / len(system.initial_state), 10);
  });

  it('never exceeds tiny budgets and keeps the target over the context', () => {
    for (const budget of [0, 1, 2, 3, 5, 8, 13, 21, 34]) {
      const f = fitTurn(tok, T, sample, { budget });
      expect(f.ids.length, `budget ${budget}`).toBeLessThanOrEqual(budget);
      expect(f.segments.flatMap((s) => s.ids)).toEqual(f.ids);
      if (budget > 0)
        expect(
          f.segments.some((s) => s.role === 'target' && s.ids.length > 0),
          `budget ${budget}`,
        ).toBe(true);
    }
    // Every budget up to the whole: within it, and the context is what fitContext gives for the row's context budget.
    for (let budget = 0; budget <= full + 2; budget++) {
      for (const s of [sample, { ...sample, targetObservation: 'a much longer observation than the others' }]) {
        const f = fitTurn(tok, T, s, { budget });
        expect(f.ids.length, `budget ${budget}`).toBeLessThanOrEqual(budget);
        if (f.ids[0] === tok.special.system) expect(fitContext(tok, T, s, f.contextBudget).ids).toEqual(f.ids.slice(0, f.contextLength));
      }
    }
    // Room for the frame, the action and the target only: nothing else.
    const f = fitTurn(tok, T, sample, { budget: len(reduced([], 0, { ...L, preamble: '', closing: '' })) });
    expect(f.coverage).toMatchObject({ system: 0, turns: 0, initialState: 0, target: 1, keptTurns: 0 });
  });

  it('shares a huge action with the target: head and tail of the action, the opening of the target, nothing else', () => {
    const huge = { ...sample, action: `HEAD ${'x'.repeat(2000)} TAIL`, targetObservation: `START ${'y'.repeat(2000)}` };
    const f = fitTurn(tok, T, huge, { budget: 200 });
    expect(f.ids.length).toBe(200);
    const action = text(f.segments.find((s) => s.part === 'action')!.ids);
    expect(action).toMatch(/^<\|action\|>HEAD x+…x+ TAIL<\|observation\|>$/);
    const target = f.segments.find((s) => s.role === 'target')!;
    expect(text(target.ids).startsWith('START ')).toBe(true);
    expect(target.ids.length).toBeGreaterThanOrEqual(95);
    expect(f.segments.some((s) => s.role === 'close')).toBe(false);
    expect(f.segments.map((s) => s.part)).not.toContain('initial_state');
    // A huge target alone takes half the budget; the context gets the rest.
    const g = fitTurn(tok, T, { ...sample, targetObservation: 'y'.repeat(5000) }, { budget: 300 });
    expect(g.segments.find((s) => s.role === 'target')!.ids.length).toBeGreaterThanOrEqual(145);
    expect(g.coverage.initialState).toBe(1);
  });

  it('with an empty history, keeps the state and reports no turns', () => {
    const first = { ...sample, history: [], turnIndex: 0 };
    const f = fitTurn(tok, T, first, { budget: len(reduced(['initial_state'], 0, { ...L, preamble: '', closing: '' })) });
    expect(text(f.ids)).toBe(
      renderSample(fromLegacy({ ...L, preamble: '', closing: '' }), { ...first, systemPrompt: { ...emptySystemPrompt(), initial_state: system.initial_state } })
        .text,
    );
    expect(f.coverage.turns).toBeNull();
    expect(f.coverage.historyTurns).toBe(0);
    expect(f.droppedTurns).toBe(0);
  });

  it('reports coverage: system tokens and turns seen', () => {
    const none = { ...L, preamble: '', closing: '' };
    const f = fitTurn(tok, T, sample, { budget: len(reduced(['initial_state'], 1, none)) });
    const systemTokens =
      len('PREAMBLE') +
      len('CLOSING') +
      (['task_description', 'action_space', 'initial_state', 'demonstrations', 'simulation_instruction'] as const).reduce(
        (n, k, i) => n + len(`${L.sections[i].heading}\n${system[k]}`),
        0,
      );
    expect(f.coverage.system).toBeCloseTo(len(`IS:\n${system.initial_state}`) / systemTokens, 12);
    expect(f.coverage.turns).toBeCloseTo(1 / 3, 12);
    expect(f.coverage).toMatchObject({ initialState: 1, target: 1, historyTurns: 3, keptTurns: 1 });
    expect(f.droppedTurns).toBe(2);
  });

  it("gives a generator the same prompt as the training row's, for the same context budget", () => {
    for (const budget of [30, 60, 90, 120, 160, full]) {
      const row = fitTurn(tok, T, sample, { budget });
      const completion = len(T.targetOpen + sample.targetObservation + T.targetClose);
      // A generator given the room the completion took (its prompt ends with the opening tag) sees the row's prompt.
      const prompt = fitPrompt(tok, T, sample, budget - completion + len(T.targetOpen));
      expect(prompt.ids, `budget ${budget}`).toEqual(row.ids.slice(0, row.contextLength + len(T.targetOpen)));
      expect(fitContext(tok, T, sample, budget - completion).ids).toEqual(row.ids.slice(0, row.contextLength));
    }
  });

  it('with answerRoom, lays a training row out exactly as a generator leaving that room sees the sample', () => {
    const T0 = full + 8;
    for (const answerRoom of [4, 9, 20, 40])
      for (const target of ['done', 'x'.repeat(15), 'y'.repeat(60)]) {
        const s = { ...sample, targetObservation: target };
        // A row of T0 + 1 tokens (inputs and targets overlap); a generator with T0 positions and maxTokens = answerRoom.
        const row = fitTurn(tok, T, s, { budget: T0 + 1, answerRoom });
        const prompt = fitPrompt(tok, T, s, T0 - answerRoom);
        expect(row.ids.slice(0, prompt.ids.length), `room ${answerRoom}, target ${target.length}`).toEqual(prompt.ids);
        expect(row.contextLength + len(T.targetOpen)).toBe(prompt.ids.length);
        // The target keeps what fits after that prompt: all of it up to the answer room, more when the row has space.
        const kept = row.segments.find((g) => g.part === 'target')!.ids.length;
        expect(kept).toBe(Math.min(target.length, T0 + 1 - prompt.ids.length));
        expect(row.ids.length).toBeLessThanOrEqual(T0 + 1);
      }
    // Without it, a short target's row gives the context all the room the target leaves: a longer prompt.
    const plain = fitTurn(tok, T, { ...sample, targetObservation: 'done' }, { budget: T0 - 30 });
    const roomy = fitTurn(tok, T, { ...sample, targetObservation: 'done' }, { budget: T0 - 30, answerRoom: 40 });
    expect(roomy.contextLength).toBeLessThan(plain.contextLength);
  });
});

describe('the truncation policy on the built-in text templates', () => {
  it('at every budget, a cut without elisions reads exactly as the template renders the sample reduced to the kept parts', async () => {
    const { BUILTIN_TEMPLATES } = await import('./index.ts');
    for (const t of Object.values(BUILTIN_TEMPLATES)) {
      const full = len(renderSample(t, sample).text);
      expect(text(fitTurn(tok, t, sample, { budget: full }).ids)).toBe(renderSample(t, sample).text);
      let compared = 0;
      for (let budget = full; budget > 20; budget--) {
        const f = fitTurn(tok, t, sample, { budget });
        expect(f.ids.length).toBeLessThanOrEqual(budget);
        if (f.segments.some((s) => s.elided) || !f.segments.some((s) => s.part === 'close')) continue;
        const kept = new Set(f.segments.map((s) => s.part));
        // The template's own prose cannot be removed from a sample: compare only cuts that keep it, when it has any.
        const prose = sampleLayout(t, sample).some((i) => i.name === 'preamble' || i.name === 'closing');
        if (prose && !(kept.has('preamble') && (kept.has('closing') || !sampleLayout(t, sample).some((i) => i.name === 'closing')))) continue;
        const sp = { ...emptySystemPrompt() };
        for (const k of Object.keys(system) as (keyof SystemPrompt)[]) if (kept.has(k as never)) sp[k] = system[k]!;
        const turns = f.segments.filter((s) => s.part === 'turn').length;
        const reducedSample = { ...sample, systemPrompt: sp, history: sample.history.slice(sample.history.length - turns) };
        // Kept turns keep their own numbers: compare only where the numbering cannot differ (all turns, or templates without numbers).
        if (turns !== sample.history.length && /turn\.index|step/.test(t.text)) continue;
        expect(text(f.ids), `${t.version} at ${budget}`).toBe(renderSample(t, reducedSample).text);
        compared++;
      }
      expect(compared, t.version).toBeGreaterThan(3);
    }
  });
});
