import { describe, expect, it } from 'vitest';
import { analyseErrors, formatAnalysis, sampleObjective } from './analysis.ts';
import { newLoopState, plannedEvaluations, runOptimization, checkLoopConfig, type LoopConfig, type LoopEnv, type LoopState, type Optimizer } from './loop.ts';
import { BLOCK_BEGIN, BLOCK_END, blockInstructions, OLD_BLOCK_BEGIN, OLD_BLOCK_END, proposeOffline, withCurrentMarkers, withInstructions } from './offline.ts';
import { BUILTIN_TEMPLATES, checkTemplateText } from '../templates/builtin.ts';
import { renderSystem } from '../templates/render.ts';
import { placeholderNames } from '../templates/jinja.ts';
import { candidateProblems, endpointOptimizer, offlineOptimizer, readOptimizerReply, templateVariables } from './optimizers.ts';
import { fakeEvaluate, judged } from './testing.ts';

const TEMPLATE = 'You simulate {{ domain }}.\n\n{{ task_description }}\n\n{{ simulation_instruction }}\n\nHistory:\n{{ history }}';
/** A template that passes checkTemplateText (a history loop and the action). */
const VALID =
  'You simulate {{ domain }}.\n{{ simulation_instruction }}\n{% for turn in history %}{{ turn.action }} -> {{ turn.observation }}\n{% endfor %}{{ action }}';

describe('analyseErrors', () => {
  it('objectives, weakest dimension, lowest samples and verifier mismatches', () => {
    const records = [
      judged(
        0,
        { factuality: 2 },
        { weaknesses: ['Invents a file'], verifier: { pass: 0, applicable: true, rule: 'echo', regions: 1, failure: 'echoed "hi": missing' } },
      ),
      judged(1, { factuality: 2, format: 3 }, { weaknesses: ['Invents a file', 'Adds commentary'] }),
      judged(2, {}, { verifier: { pass: 1, applicable: true, rule: 'echo', regions: 1 } }),
      judged(3, {}, { failed: true, gen: '', error: 'No model generation', total_score: null }),
      judged(4, {}, { failed: true, error: 'judge reply unparseable', total_score: null }),
    ];
    const a = analyseErrors(records);
    expect(a.objectives[0]).toBeCloseTo(((3.6 - 1) / 4) * 100, 9);
    expect(a.objectives[2]).toBe(75);
    expect(a.objectives[3]).toBe(0); // no generation: the template's fault, scores 0
    expect(a.objectives[4]).toBeNull(); // the judge failed: drops out
    expect(a.dimensions[0].dimension).toBe('factuality');
    expect(a.dimensions[0].weaknesses[0]).toEqual({ text: 'Invents a file', count: 2 });
    expect(a.lowest.map((s) => s.index)).toEqual([3, 1, 0, 2]);
    expect(a.mismatches).toEqual([{ rule: 'echo', count: 1, examples: ['echoed "hi": missing'] }]);
    expect(a.verifier).toEqual({ checked: 2, matched: 1 });
    const text = formatAnalysis(a);
    expect(text).toMatch(/factuality: 41\.7 \(2 samples at 3 or below\)/);
    expect(text).toMatch(/echo: 1 \(e\.g\. echoed "hi": missing\)/);
  });

  it('a record without a usable total has no objective', () => {
    expect(sampleObjective(judged(0, {}, { total_score: 0 }))).toBeNull();
  });
});

describe('offline optimizer', () => {
  const analysis = analyseErrors(fakeEvaluate(6, 'dev')(TEMPLATE));

  it('adds its block after the simulation instruction, and edits only its block', () => {
    const [first] = proposeOffline(TEMPLATE, analysis, 1, 0);
    expect(first.text.indexOf(BLOCK_BEGIN)).toBeGreaterThan(first.text.indexOf('{{ simulation_instruction }}'));
    expect(first.text.indexOf(BLOCK_END)).toBeLessThan(first.text.indexOf('History:'));
    expect(blockInstructions(first.text)).toHaveLength(1);
    expect(first.note).toMatch(/^added ".*" for factuality/);
    expect(blockInstructions(first.text)[0]).toMatch(/invent/); // keyword "invents" in the judge's weaknesses
    const back = withInstructions(first.text, []);
    expect(back.replace(`${BLOCK_BEGIN}\n${BLOCK_END}`, '').replace(/\n{3,}/g, '\n\n')).toBe(TEMPLATE);
  });

  it('is deterministic, proposes distinct candidates, skips tried texts', () => {
    const a = proposeOffline(TEMPLATE, analysis, 3, 5);
    expect(proposeOffline(TEMPLATE, analysis, 3, 5)).toEqual(a);
    expect(new Set(a.map((p) => p.text)).size).toBe(a.length);
    const b = proposeOffline(TEMPLATE, analysis, 3, 5, { exclude: new Set([a[0].text]) });
    expect(b.map((p) => p.text)).not.toContain(a[0].text);
  });

  it('puts its block after a field block, not inside it, so it renders whatever fields a sample has', () => {
    for (const t of Object.values(BUILTIN_TEMPLATES)) {
      const text = withInstructions(t.text, ['Never invent files.']);
      expect(checkTemplateText(text)).toEqual([]);
      const sample = {
        domain: 'terminal',
        systemPrompt: { task_description: 'list', action_space: 'bash', initial_state: '', demonstrations: '', simulation_instruction: '' },
        history: [],
        action: 'ls',
      };
      const system = renderSystem({ ...t, text }, sample);
      expect(system, t.version).toMatch(/\n- Never invent files\.(\n|$)/);
      expect(renderSystem({ ...t, text }, { ...sample, systemPrompt: { ...sample.systemPrompt, simulation_instruction: 'rules' } })).toMatch(
        /rules\n\n- Never invent files\./,
      );
    }
  });

  it('without the anchor, puts its block just before the history loop', () => {
    const text = withInstructions('Be {{ domain }}.\n{% for turn in history %}{{ turn.action }}{% endfor %}{{ action }}', ['x']);
    expect(text).toBe(`Be {{ domain }}.\n\n${BLOCK_BEGIN}\n- x\n${BLOCK_END}\n{% for turn in history %}{{ turn.action }}{% endfor %}{{ action }}`);
  });

  it('reads the block of a template saved with the old markers, and its next edit writes the current ones in their place', () => {
    const lines = [
      'Reuse the identifiers, paths and ordering already established in the session; do not renumber or rename anything.',
      'Never invent files, directories, names or values that were not created or shown earlier in the session; reproduce values already shown exactly.',
    ];
    const current = withInstructions(TEMPLATE, lines);
    const saved = current.replace(BLOCK_BEGIN, OLD_BLOCK_BEGIN).replace(BLOCK_END, OLD_BLOCK_END);
    expect(saved).not.toContain(BLOCK_BEGIN);
    expect(blockInstructions(saved)).toEqual(lines);
    // Rewritten in place: one block, the current markers, the author's text around it unchanged.
    expect(withInstructions(saved, lines)).toBe(current);
    const edited = withInstructions(saved, [lines[1]]);
    expect(edited).not.toContain(OLD_BLOCK_BEGIN);
    expect(edited).not.toContain(OLD_BLOCK_END);
    expect(edited.split(BLOCK_BEGIN)).toHaveLength(2);
    expect(blockInstructions(edited)).toEqual([lines[1]]);
    // The offline optimizer's candidates from such a template move or remove its lines, not add a second block.
    const proposals = proposeOffline(saved, analysis, 10, 1);
    expect(proposals.length).toBeGreaterThan(0);
    for (const p of proposals) {
      expect(p.text).not.toContain(OLD_BLOCK_BEGIN);
      expect(p.text.split(BLOCK_BEGIN)).toHaveLength(2);
    }
    expect(proposals.some((p) => /^moved the factuality instruction to the top/.test(p.note))).toBe(true);
    // None differs from the template, or from a version tried with the current markers, by the markers alone.
    expect(proposals.map((p) => p.text)).not.toContain(current);
    const tried = proposeOffline(current, analysis, 10, 1).map((p) => p.text);
    expect(proposals.map((p) => p.text)).toEqual(tried);
    const triedSaved = new Set(tried.slice(0, 2).map((t) => t.replace(BLOCK_BEGIN, OLD_BLOCK_BEGIN).replace(BLOCK_END, OLD_BLOCK_END)));
    expect(proposeOffline(saved, analysis, 10, 1, { exclude: triedSaved }).map((p) => p.text)).toEqual(tried.slice(2));
    expect(withCurrentMarkers(saved)).toBe(current);
    expect(withCurrentMarkers(current)).toBe(current);
    expect(withCurrentMarkers(TEMPLATE)).toBe(TEMPLATE);
  });

  it('moves and removes instructions once there are some', () => {
    const withTwo = withInstructions(TEMPLATE, [
      'Reuse the identifiers, paths and ordering already established in the session; do not renumber or rename anything.',
      'Never invent files, directories, names or values that were not created or shown earlier in the session; reproduce values already shown exactly.',
    ]);
    const notes = proposeOffline(withTwo, analyseErrors(fakeEvaluate(6, 'dev')(TEMPLATE)), 10, 1).map((p) => p.note);
    expect(notes.some((n) => /^moved the factuality instruction to the top/.test(n))).toBe(true);
  });
});

describe('endpoint optimizer replies', () => {
  it('templateVariables is the template language placeholder names (bound names, attributes and filters left out)', () => {
    expect(templateVariables('{{ a }} {%- if b %}{{ c | trim }}{% endif %}{% for t in history %}{{ t.action }}{% endfor %}')).toEqual([
      'a',
      'b',
      'c',
      'history',
    ]);
    expect(templateVariables(BUILTIN_TEMPLATES.v1.text)).toEqual([...placeholderNames(BUILTIN_TEMPLATES.v1.text)].sort());
    expect(templateVariables('{% set x = domain %}{{ x }} {{ "{{ not_a_name }}" }}')).toEqual(['domain']);
  });
  it('rejects a reply that does not parse or names an unknown variable, with the line', () => {
    const broken = readOptimizerReply(`<template>${VALID}\n{% if domain %}unclosed</template>\nNOTE: x`, VALID);
    expect(broken.rejected).toMatch(/not a usable template: line \d+: \{% if %\} is never closed/);
    const unknown = readOptimizerReply(`<template>${VALID}\n{{ tool_list }}</template>`, VALID);
    expect(unknown.rejected).toMatch(/line 5: unknown variable "tool_list"/);
    expect(candidateProblems(`${VALID}\nMore.`, VALID)).toEqual([]);
    // A problem the parent already has is not the candidate's doing.
    expect(candidateProblems(`${TEMPLATE}\nMore.`, TEMPLATE)).toEqual([]);
  });
  it('a renamed loop variable is not a dropped placeholder', () => {
    const renamed = VALID.replace(/turn/g, 'step_');
    expect(readOptimizerReply(`<template>${renamed}</template>\nNOTE: rename`, VALID)).toEqual({ note: 'rename', text: renamed });
  });
  it('uses a tagged template with its note', () => {
    const c = readOptimizerReply(`<template>\n${TEMPLATE}\nBe exact.\n</template>\nNOTE: asked for exactness`, TEMPLATE);
    expect(c).toEqual({ note: 'asked for exactness', text: `${TEMPLATE}\nBe exact.` });
  });
  it('repairs a fenced reply and CRLF line ends, saying so', () => {
    const c = readOptimizerReply(`Here it is:\r\n\`\`\`jinja\r\n${TEMPLATE}\r\nBe exact.\r\n\`\`\`\r\nNOTE: exactness`, TEMPLATE);
    expect(c.text).toBe(`${TEMPLATE}\nBe exact.`);
    expect(c.note).toMatch(/exactness \(repaired: the template came in a code fence/);
    expect(c.rejected).toBeUndefined();
  });
  it('rejects a reply with no template, one that drops a placeholder, and an unchanged one', () => {
    expect(readOptimizerReply('I think the template is fine.', TEMPLATE).rejected).toMatch(/no template/);
    expect(readOptimizerReply(`<template>${TEMPLATE.replace('{{ history }}', '')}</template>`, TEMPLATE).rejected).toMatch(
      /dropped placeholder\(s\) \{\{ history \}\}/,
    );
    expect(readOptimizerReply(`<template>${TEMPLATE}</template>`, TEMPLATE).rejected).toMatch(/unchanged/);
  });
});

const CONFIG: LoopConfig = { rounds: 3, candidates: 3, margin: 0, level: 0.95, seed: 7, devSize: 12, testSize: 6 };

function env(config = CONFIG, optimizer: Optimizer = offlineOptimizer(), extra: Partial<LoopEnv> = {}): LoopEnv & { evaluations: string[] } {
  const evaluations: string[] = [];
  return {
    optimizer,
    evaluations,
    async evaluate(text, split) {
      evaluations.push(split);
      return fakeEvaluate(split === 'dev' ? config.devSize : config.testSize, split)(text);
    },
    validate: (text) => (text.includes('{{ history }}') ? [] : ['the template lost {{ history }}']),
    ...extra,
  };
}

describe('runOptimization', () => {
  it('improves the weak dimension over 3 rounds, keeps rejected candidates, scores the test split once', async () => {
    const e = env();
    const s = await runOptimization(e, newLoopState(CONFIG), { text: TEMPLATE, note: 'v0' });
    expect(s.stopped).toBe('done');
    expect(s.rounds).toHaveLength(3);
    const best = s.versions.find((v) => v.id === s.best)!;
    expect(best.text).toMatch(/invent/);
    expect(best.mean!).toBeGreaterThan(s.versions[0].mean!);
    expect(s.versions.filter((v) => v.status === 'rejected').length).toBeGreaterThan(0);
    for (const v of s.versions.filter((x) => x.status === 'rejected' || x.status === 'accepted')) expect(v.reason).toMatch(/Δ|too few/);
    expect(e.evaluations.filter((x) => x === 'test')).toHaveLength(1);
    expect(s.test?.version).toBe(s.best);
    expect(e.evaluations.length).toBeLessThanOrEqual(plannedEvaluations(CONFIG));
    expect(s.calls.model).toBe(e.evaluations.reduce((a, x) => a + (x === 'dev' ? 12 : 6), 0));
  });

  it('is deterministic, and a run cancelled midway resumes to the same end', async () => {
    const whole = await runOptimization(env(), newLoopState(CONFIG), { text: TEMPLATE, note: 'v0' });
    let saved: LoopState | null = null;
    const controller = new AbortController();
    let n = 0;
    const first = env(CONFIG, offlineOptimizer(), {
      signal: controller.signal,
      onState: (s) => {
        saved = structuredClone(s);
        if (++n === 4) controller.abort(new Error('cancelled'));
      },
    });
    await expect(runOptimization(first, newLoopState(CONFIG), { text: TEMPLATE, note: 'v0' })).rejects.toThrow(/cancelled/);
    expect(saved!.stopped).toBeUndefined();
    const resumed = await runOptimization(env(), JSON.parse(JSON.stringify(saved)), { text: TEMPLATE, note: 'v0' });
    expect(resumed).toEqual(whole);
  });

  it('respects the budget and keeps room for the test split', async () => {
    const config = { ...CONFIG, budget: { modelCalls: 12 * 3 + 6 } };
    const s = await runOptimization(env(config), newLoopState(config), { text: TEMPLATE, note: 'v0' });
    expect(s.stopped).toBe('budget');
    expect(s.calls.model).toBeLessThanOrEqual(42);
    expect(s.test).toBeDefined();
    expect(s.versions.some((v) => v.reason === 'not scored: the budget ran out')).toBe(true);
  });

  it('an endpoint optimizer: malformed and placeholder-dropping replies are recorded as invalid with the reason', async () => {
    const replies = [
      'Sorry, I cannot help with that.',
      `<template>${TEMPLATE.replace('{{ history }}', 'no history')}</template>\nNOTE: shorter`,
      `\`\`\`\n${TEMPLATE}\nNever invent files.\n\`\`\`\nNOTE: no inventing`,
    ];
    let i = 0;
    const opt = endpointOptimizer({ complete: async () => replies[i++ % replies.length], samples: 'task: list files', variables: ['domain', 'history'] });
    const config = { ...CONFIG, rounds: 1 };
    const s = await runOptimization(env(config, opt), newLoopState(config), { text: TEMPLATE, note: 'v0' });
    const r1 = s.versions.filter((v) => v.round === 1);
    expect(r1.map((v) => v.status)).toEqual(['invalid', 'invalid', 'accepted']);
    expect(r1[0].reason).toMatch(/no template/);
    expect(r1[1].reason).toMatch(/dropped placeholder\(s\) \{\{ history \}\}/);
    expect(r1[2].note).toMatch(/repaired/);
    expect(s.best).toBe('r1c3');
  });

  it('refuses a bad configuration and a starting template that does not validate', async () => {
    expect(checkLoopConfig({ ...CONFIG, rounds: 0, level: 1.5 })).toEqual([expect.stringMatching(/rounds/), expect.stringMatching(/confidence level/)]);
    await expect(runOptimization(env(), newLoopState(CONFIG), { text: 'no history here', note: 'v0' })).rejects.toThrow(
      /starting template cannot be used: the template lost/,
    );
  });
});
