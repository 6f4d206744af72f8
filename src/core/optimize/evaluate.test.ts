import { describe, expect, it } from 'vitest';
import { isTurnRequest, type GenerateRequest, type LwmBackend, type TurnRequest } from '../backend.ts';
import { benchSampleRecords } from '../bench/evalTurns.ts';
import { sampleFromRecord, type BenchSample } from '../bench/runner.ts';
import { generateTrajectories } from '../../envs/generate.ts';
import { localJudge } from '../judge/rubric.ts';
import { BUILTIN_TEMPLATES, TARGET_OPEN } from '../templates/builtin.ts';
import { renderContext, renderSystem } from '../templates/render.ts';
import { benchEvaluator, layoutSampleOf, requestFormFor, splitForOptimization, templateRequest, templateValidator } from './evaluate.ts';
import { newLoopState, runOptimization } from './loop.ts';
import { offlineOptimizer } from './optimizers.ts';

const trajectories = [...generateTrajectories('terminal', 30, 3), ...generateTrajectories('mcp', 30, 3)];
const samples = benchSampleRecords(trajectories, { evalFraction: 0.5, seed: 1 }).map(sampleFromRecord);

describe('splitForOptimization', () => {
  const o = { devPerDomain: 6, testPerDomain: 4, seed: 9 };
  it('fills each domain, and no trajectory is on both sides', () => {
    const { dev, test } = splitForOptimization(samples, o);
    for (const d of ['terminal', 'mcp']) {
      expect(dev.filter((s) => s.domain === d)).toHaveLength(6);
      expect(test.filter((s) => s.domain === d)).toHaveLength(4);
    }
    const devTraj = new Set(dev.map((s) => String(s.record!.id)));
    expect(test.some((s) => devTraj.has(String(s.record!.id)))).toBe(false);
  });
  it('does not depend on the input order', () => {
    const key = (xs: BenchSample[]) => xs.map((s) => `${s.id}#${s.turnIdx}`).sort();
    const a = splitForOptimization(samples, o);
    const b = splitForOptimization([...samples].reverse(), o);
    expect(key(b.dev)).toEqual(key(a.dev));
    expect(key(b.test)).toEqual(key(a.test));
  });
});

describe('templateRequest: the sample rendered by the template code', () => {
  const text = BUILTIN_TEMPLATES.v1.text;
  const s = samples.find((x) => x.history.length > 0)!;
  const ls = layoutSampleOf(s);
  it('chat: renderSystem as the system message, the turns as user/assistant messages, then the action', () => {
    const r = templateRequest(text, s, 'chat') as { system: string; messages: { role: string; content: string }[] };
    expect(r.system).toBe(renderSystem(BUILTIN_TEMPLATES.v1, ls));
    expect(r.system).toMatch(/^You simulate a terminal|^You simulate a mcp/);
    expect(r.messages).toHaveLength(2 * s.history.length + 1);
    expect(r.messages.at(-1)).toEqual({ role: 'user', content: s.action });
  });
  it('prompt: renderContext and the opening prediction tag', () => {
    expect(templateRequest(text, s, 'prompt')).toEqual({ prompt: renderContext(BUILTIN_TEMPLATES.v1, ls) + TARGET_OPEN });
  });
  it('turn: the template travels with the sample (no AgentWorldBench texts to fall back on)', () => {
    const r = templateRequest(text, s) as TurnRequest;
    expect(r.template!.text).toBe(text);
    expect(r.awb).toBeUndefined();
    expect(r.reference).toBe(s.reference);
    expect(renderContext(r.template!, r.sample)).toBe(renderContext(BUILTIN_TEMPLATES.v1, ls));
  });
  it("turn and prompt: a start template's own prediction tags when given", () => {
    const tags = { targetOpen: '<obs>\n', targetClose: '\n</obs>' };
    expect((templateRequest(text, s, 'turn', tags) as TurnRequest).template).toMatchObject(tags);
    expect((templateRequest(text, s, 'prompt', tags) as { prompt: string }).prompt.endsWith('<obs>\n')).toBe(true);
  });
});

describe('requestFormFor: the form a simulator gets, for the CLI and the app alike', () => {
  it('chat for an endpoint and a folder with a chat template; turn for a checkpoint, an ONNX export without one, the baselines', () => {
    expect(requestFormFor({ kind: 'endpoint' })).toBe('chat');
    expect(requestFormFor({ kind: 'hf', chatTemplate: true })).toBe('chat');
    expect(requestFormFor({ kind: 'onnx', chatTemplate: true })).toBe('chat');
    expect(requestFormFor({ kind: 'onnx', chatTemplate: false })).toBe('turn');
    expect(requestFormFor({ kind: 'checkpoint' })).toBe('turn');
    expect(requestFormFor({ kind: 'copy-last' })).toBe('turn');
    expect(requestFormFor({ kind: 'reference' })).toBe('turn');
  });
});

describe('templateValidator', () => {
  const validate = templateValidator(samples.slice(0, 6));
  it('accepts the built-ins and reports a bad text with its line', () => {
    for (const t of Object.values(BUILTIN_TEMPLATES)) expect(validate(t.text)).toEqual([]);
    expect(validate('{{ domain }}\n{{ tool_list }}\n{% for turn in history %}{% endfor %}{{ action }}')[0]).toMatch(/^line 2: unknown variable "tool_list"/);
    expect(validate('{{ domain }}')).toEqual([expect.stringMatching(/never shows the history/), expect.stringMatching(/never shows the current action/)]);
  });
  it('names the samples a text does not render on', () => {
    const problems = validate('{{ domain }}{% for turn in history %}{{ turn.action | upper }}{% endfor %}{{ action }}');
    expect(problems[0]).toMatch(/^sample .* turn \d+ \((terminal|mcp)\): the template changes or moves a value/);
  });
});

/**
 * A simulator that lays the turn out with the template it is given, as a checkpoint does: it
 * answers with the real observation when the rendered context asks it not to invent, and with the
 * last observation otherwise.
 */
function obedientSimulator(): LwmBackend {
  return {
    name: 'obedient',
    async *generate(request: GenerateRequest) {
      if (!isTurnRequest(request) || !request.template) throw new Error('expected a turn request with a template');
      const context = renderContext(request.template, request.sample);
      yield `<predicted_observation>${/never invent/i.test(context) ? request.reference : (request.sample.history.at(-1)?.observation ?? '')}</predicted_observation>`;
    },
  };
}

describe('the loop on generated trajectories with the local judge', () => {
  it('runs 3 rounds deterministically from a built-in template and finds the instruction that helps', async () => {
    const splits = splitForOptimization(samples, { devPerDomain: 5, testPerDomain: 3, seed: 2 });
    const run = async () => {
      const evaluate = benchEvaluator({ backend: obedientSimulator(), judge: localJudge, splits, generate: { maxTokens: 64, temperature: 0 } });
      const config = { rounds: 3, candidates: 3, margin: 0, level: 0.95, seed: 1, devSize: splits.dev.length, testSize: splits.test.length };
      return runOptimization({ optimizer: offlineOptimizer(), evaluate, validate: templateValidator(splits.dev) }, newLoopState(config), {
        text: BUILTIN_TEMPLATES.v0.text,
        note: 'start',
      });
    };
    const s = await run();
    expect(s.stopped).toBe('done');
    expect(s.rounds.map((r) => r.round)).toEqual([1, 2, 3]);
    expect(s.versions.every((v) => v.status !== 'invalid')).toBe(true);
    const best = s.versions.find((v) => v.id === s.best)!;
    expect(best.text).toMatch(/Never invent/);
    expect(best.mean!).toBeGreaterThan(s.versions[0].mean! + 10);
    expect(s.test!.mean!).toBeGreaterThan(50);
    expect(JSON.parse(JSON.stringify(await run()))).toEqual(JSON.parse(JSON.stringify(s)));
  });
});
