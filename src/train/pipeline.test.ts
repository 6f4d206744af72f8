import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../envs/generate.ts';
import { DOMAINS } from '../core/schema/types.ts';
import { BUILTIN_TEMPLATES } from '../core/templates/index.ts';
import { trainBpe } from '../core/tokenizer/index.ts';
import { resolveSpec, stageRows, unigramLoss } from './pipeline.ts';

const data = generateTrajectories('mcp', 4, 1);
const tok = trainBpe(
  data.flatMap((t) => t.turns.map((u) => u.observation)),
  { vocabSize: 300 },
);

describe('pipeline settings', () => {
  it('renders SFT rows with a user template version named in the mix', () => {
    const v3 = {
      ...BUILTIN_TEMPLATES.v0,
      version: 'v3',
      text: BUILTIN_TEMPLATES.v0.text.replace(/^You are the environment\..*$/m, 'ZEBRA-MARKER simulate {{ domain }}.'),
    };
    const spec = resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1, templates: { v3: 1 }, templateSet: { v3 } });
    const rows = stageRows('sft', { tok, T: 20_000 }, data, spec.templates, 0, false, spec.templateSet);
    expect(rows.length).toBe(data.reduce((n, t) => n + t.turns.length, 0));
    expect(tok.decode(rows[0].ids)).toContain('ZEBRA-MARKER simulate mcp.');
  });

  it('reads a JSON template of a run spec stored before templates became text', () => {
    const v4 = {
      version: 'v4',
      description: 'old',
      preamble: 'OKAPI-MARKER {{domain}}.',
      sections: [],
      closing: '',
      historyTurn: '<|action|>{{action}}<|observation|>{{observation}}<|end_turn|>',
      currentAction: '<|action|>{{action}}<|observation|>',
      targetOpen: '<predicted_observation>\n',
      targetClose: '\n</predicted_observation>',
    };
    const spec = resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1, templates: { v4: 1 }, templateSet: { v4 } as never });
    const rows = stageRows('sft', { tok, T: 20_000 }, data, spec.templates, 0, false, spec.templateSet);
    expect(tok.decode(rows[0].ids)).toContain('<|system|>\nOKAPI-MARKER mcp.\n<|action|>');
  });

  it('refuses a mix naming an unknown version, and nonsense settings, in words', () => {
    expect(() => resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1, templates: { v9: 1 } })).toThrow(/v9: no template with this version/);
    expect(() => resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 0 })).toThrow(/steps must be a positive integer/);
    expect(() => resolveSpec({ kind: 'train', stage: 'rl', preset: 'micro', steps: 1, rl: { groupSize: 1 } })).toThrow(/groupSize must be an integer ≥ 2/);
    // Rollouts are sampled from softmax(logits/τ) and GSPO's log-probs are those of the same distribution.
    for (const temperature of [0, -1, Number.NaN])
      expect(() => resolveSpec({ kind: 'train', stage: 'rl', preset: 'micro', steps: 1, rl: { temperature } })).toThrow(
        /rl.temperature must be a number above 0/,
      );
    expect(() => resolveSpec({ kind: 'train', stage: 'rl', preset: 'micro', steps: 1, rl: { topK: 5 } })).toThrow(/rl.topK must be 0/);
    expect(resolveSpec({ kind: 'train', stage: 'rl', preset: 'micro', steps: 1, rl: { temperature: 0.6 } }).rl.temperature).toBe(0.6);
  });

  it('RL update passes process each group prompt once unless told otherwise', () => {
    expect(resolveSpec({ kind: 'train', stage: 'rl', preset: 'micro', steps: 1 }).rl.sharedPrefix).toBe(true);
    expect(resolveSpec({ kind: 'train', stage: 'rl', preset: 'micro', steps: 1, rl: { sharedPrefix: false } }).rl.sharedPrefix).toBe(false);
  });

  it('carries the mask settings: missing keys take the defaults, a bad one is named', async () => {
    const { DEFAULT_MASK_CONFIG } = await import('../core/masking/index.ts');
    expect(resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1 }).mask).toEqual(DEFAULT_MASK_CONFIG);
    const spec = resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1, mask: { echoMinJaccard: 0.3 } });
    expect(spec.mask).toEqual({ ...DEFAULT_MASK_CONFIG, echoMinJaccard: 0.3 });
    expect(() => resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1, mask: { echoMinJaccard: 3 } })).toThrow(
      'the mask configuration: echoMinJaccard: must be a number in [0, 1], got 3',
    );
  });

  it('the unigram baseline is the entropy of the weighted targets', () => {
    const rows = [{ ids: [0, 1, 1, 2, 2], weights: [0, 1, 1, 1, 1], promptLength: 0, droppedTurns: 0, truncated: false }];
    expect(unigramLoss(rows)).toBeCloseTo(Math.log(2), 12);
  });
});

describe('SFT from chosen labels', () => {
  it('trains on the label, with the reasoning trace weighted apart from the observation', async () => {
    const { expandTurns } = await import('../core/turns/index.ts');
    const { labelledRows } = await import('./pipeline.ts');
    const s = expandTurns(data)[1];
    const [plain, traced] = labelledRows(
      { tok, T: 20_000 },
      [
        { sample: { ...s, targetObservation: 'LABEL-A' }, weight: 0.8 },
        { sample: { ...s, targetObservation: 'LABEL-B' }, reasoning: 'because the note exists', weight: 1 },
      ],
      { v0: 1 },
      0,
    );
    const weighted = (r: typeof plain, w: number) => tok.decode(r.ids.filter((_, i) => r.weights[i] === w));
    expect(weighted(plain, 0.8)).toContain('LABEL-A');
    expect(weighted(traced, 0.5)).toContain('because the note exists');
    expect(weighted(traced, 1)).toContain('LABEL-B');
    expect(weighted(traced, 1)).not.toContain('because');
  });
});

describe('starting from a checkpoint', () => {
  it('SFT on labels never resumes an SFT run on references (nor the other way round)', async () => {
    const { presetConfig } = await import('../core/model/config.ts');
    const { initParams } = await import('../model/init.ts');
    const { saveCheckpoint } = await import('../core/model/checkpoint.ts');
    const { prepare } = await import('./pipeline.ts');
    const config = presetConfig('micro', { vocabSize: tok.vocabSize });
    const params = initParams(config, 1);
    const ckpt = (spec: object) =>
      saveCheckpoint({
        config,
        params,
        step: 4,
        optimizer: { m: new Float32Array(params.length), v: new Float32Array(params.length), step: 4 },
        extraMetadata: { stage: 'sft', tokenizer: JSON.stringify(tok.toJSON()), spec: JSON.stringify(spec) },
      });
    const plain = resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 8 });
    const labelled = { ...plain, sftLabelled: true };
    const fromPlain = ckpt(plain);
    const fromLabelled = ckpt(labelled);
    expect(prepare(plain, data, fromPlain).start.step).toBe(4); // same kind of run: resumes
    expect(prepare(labelled, data, fromPlain).start.step).toBe(0); // the teacher's checkpoint: a fresh labelled run
    expect(prepare(labelled, data, fromLabelled).start.step).toBe(4);
    expect(prepare(plain, data, fromLabelled).start.step).toBe(0);
  });
});

describe('evaluation across domains', () => {
  // Seven domains, sorted by domain as the default dataset is: the eval split's first
  // trajectories in file order would all be of one domain.
  const multi = DOMAINS.flatMap((d) => generateTrajectories(d, 12, 3)).sort((a, b) => a.domain.localeCompare(b.domain));
  const multiTok = trainBpe(
    multi.flatMap((t) => t.turns.map((u) => u.observation)),
    { vocabSize: 300 },
  );

  it('holds out trajectories of every domain, none of them trained on', async () => {
    const { prepare } = await import('./pipeline.ts');
    const spec = resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1 });
    const p = prepare(spec, multi);
    expect(new Set(p.eval.map((t) => t.domain))).toEqual(new Set(DOMAINS));
    const trainIds = new Set(p.train.map((t) => t.id));
    expect(p.eval.filter((t) => trainIds.has(t.id))).toEqual([]);
    expect(p.train.length + p.eval.length).toBe(multi.length);
  });

  it('the eval loss batches, the judged samples and the held-out RL turns span every domain', async () => {
    const { evalBatchesOf, evalRows, judgedEvalSamples, prepare } = await import('./pipeline.ts');
    for (const stage of ['sft', 'cpt'] as const) {
      const spec = resolveSpec({ kind: 'train', stage, preset: 'micro', steps: 1 });
      const p = { ...prepare(spec, multi), tok: multiTok, T: stage === 'sft' ? 20_000 : 64 };
      const set = evalRows(stage, p, p.eval, { v0: 1 }, spec.seed);
      expect(set.rows).toHaveLength(set.domains.length);
      // Round-robin: the first seven rows are one of each domain.
      expect(new Set(set.domains.slice(0, DOMAINS.length))).toEqual(new Set(DOMAINS));
      // The default two batches of eight rows.
      const batches = evalBatchesOf(set, spec.evalBatches, spec.batch, p.T, multiTok.special.pad);
      expect(batches).toHaveLength(2);
      expect(new Set(batches.flatMap((b) => b.domains))).toEqual(new Set(DOMAINS));
      expect(batches[0].batch.B).toBe(8);
      if (stage === 'sft') {
        // Rows in the same order as their samples: the row's text is of its domain.
        for (let i = 0; i < 7; i++) expect(multiTok.decode(set.rows[i].ids)).toContain(set.domains[i]);
      }
    }
    const p = prepare(resolveSpec({ kind: 'train', stage: 'rl', preset: 'micro', steps: 1 }), multi);
    const eight = judgedEvalSamples(p, 0, 8);
    expect(new Set(eight.map((s) => s.domain))).toEqual(new Set(DOMAINS));
    expect(new Set(judgedEvalSamples(p, 0, 2).map((s) => s.domain)).size).toBe(2);
    const evalIds = new Set(p.eval.map((t) => t.id));
    expect(eight.every((s) => evalIds.has(s.trajectoryId))).toBe(true);
    // One turn per trajectory (seven held out: one of twelve per domain), the same for the same seed.
    expect(eight).toHaveLength(p.eval.length);
    expect(new Set(eight.map((s) => s.trajectoryId)).size).toBe(p.eval.length);
    expect(judgedEvalSamples(p, 0, 8)).toEqual(eight);
  });
});

describe('a fresh model', () => {
  it('has the context of its rows, so it is never served positions it did not train; its other weights are the preset’s', async () => {
    const { presetConfig } = await import('../core/model/config.ts');
    const { paramLayout } = await import('../core/model/params.ts');
    const { initParams } = await import('../model/init.ts');
    const { prepare } = await import('./pipeline.ts');
    // micro: learned positions, a context of 64.
    const short = prepare(resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1, T: 40 }), data);
    expect(short.T).toBe(40);
    expect(short.config.contextLength).toBe(40);
    const layout = paramLayout(short.config);
    const wpe = layout.tensors.find((t) => t.name === 'wpe')!;
    expect(wpe.shape[0]).toBe(40);
    // The preset's full context, initialised with the same seed: the same first 40 positions and the same other tensors.
    const fullConfig = presetConfig('micro', { vocabSize: short.config.vocabSize });
    const fullLayout = paramLayout(fullConfig);
    const full = initParams(fullConfig, resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1 }).seed, fullLayout);
    for (const t of layout.tensors) {
      const f = fullLayout.tensors.find((x) => x.name === t.name)!;
      expect(short.start.params.subarray(t.offset, t.offset + t.size), t.name).toEqual(full.subarray(f.offset, f.offset + t.size));
    }
    // Rows as long as the context, or no T at all: the preset's context.
    expect(prepare(resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1, T: 64 }), data).config.contextLength).toBe(64);
    expect(prepare(resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1, T: 500 }), data).config.contextLength).toBe(64);
    expect(prepare(resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1 }), data).config.contextLength).toBe(64);
  });
});
