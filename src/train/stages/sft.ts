// The supervised stages (docs/method.md §5): CPT on packed text and SFT on weighted turn samples (or on
// chosen labels), with evaluation loss, a few judged predictions and the best checkpoint kept.
import { extractPrediction } from '../../core/judge/extract.ts';
import { localJudge } from '../../core/judge/rubric.ts';
import { judgeInputFor } from '../../core/judge/sample.ts';
import { DIMENSIONS } from '../../core/judge/types.ts';
import { categorizeDataset, maskConfigChanges } from '../../core/masking/index.ts';
import { renderSystem, templateForSample, versionCounts, type TemplateDistribution } from '../../core/templates/index.ts';
import { expandTurns, type TurnSample } from '../../core/turns/index.ts';
import type { GpuGenerator } from '../../model/generate.ts';
import type { GpuTrainer } from '../../model/trainer.ts';
import { lrAt } from '../../core/model/optim.ts';
import { BatchSampler, encodePrompt, type EncodedRow } from '../data.ts';
import { addBatchLosses, DomainMeans, domainFigures, domainFiguresLine, type DomainFigures } from '../domainMetrics.ts';
import { UserFacingError } from '../context.ts';
import { rejectionLabels } from '../teacher.ts';
import {
  createRunModel,
  reportCoverage,
  runCheckpointBytes,
  runGenerator,
  type Prepared,
  type ResolvedSpec,
  type RunExtra,
  type TrainHost,
  type TrainResult,
} from './common.ts';
import {
  evalBatchesOf,
  evalRows as evalRowsOf,
  judgedEvalSamples,
  labelledRows,
  stageRows,
  trainLabels,
  unigramLoss,
  type EvalBatch,
  type EvalRows,
} from './rows.ts';

/** CPT or SFT on a prepared run. Resumable: a checkpoint from this stage continues at its step. */
export async function runSupervised(spec: ResolvedSpec, p: Prepared, host: TrainHost, from: Uint8Array | undefined, extra: RunExtra): Promise<TrainResult> {
  const { rows, evalRows } = await supervisedRows(spec, p, host, from, extra);
  const coverage = reportCoverage(host, p.start.step, rows);
  const sampler = new BatchSampler(rows, spec.batch, p.T, p.tok.special.pad, spec.seed);
  // The first eval rows, one of each domain in turn (rows.ts evalRows).
  const evalBatches = evalBatchesOf(evalRows, spec.evalBatches, spec.batch, p.T, p.tok.special.pad);
  const model = await createRunModel(host.rt, p, { batch: spec.batch, T: p.T });
  const gen = runGenerator(host.rt, p, model.model, { maxSequences: 1, maxLength: p.config.contextLength });
  try {
    const run = await supervisedLoop(
      spec,
      p,
      host,
      { model, gen, sampler, evalBatches, unigram: unigramLoss(evalRows.rows) },
      p.start.step > 0 && extra.bestSoFar ? { ...extra.bestSoFar } : null,
    );
    return { ...run, coverage };
  } finally {
    gen.dispose();
    model.dispose();
  }
}

/** The stage's train and eval rows: turn samples, packed text, or chosen labels (made here by rejection sampling when spec.labels asks). */
export async function supervisedRows(
  spec: ResolvedSpec,
  p: Prepared,
  host: TrainHost,
  from: Uint8Array | undefined,
  extra: RunExtra,
): Promise<{ rows: EncodedRow[]; evalRows: EvalRows }> {
  // Boilerplate is judged by recurrence across the whole dataset, so categorise once over all of
  // it; train and eval rows then weigh the same turn alike.
  const masks = new Map(spec.stage === 'cpt' ? [] : categorizeDataset(p.all, spec.mask).map((m) => [m.id, m]));
  if (spec.stage === 'sft') host.log(`loss mask: ${maskConfigChanges(spec.mask).join(', ') || 'the default thresholds and ratios'}`);
  let sftLabels = extra.sftLabels;
  if (spec.stage === 'sft' && spec.labels && !sftLabels?.length) {
    sftLabels = await rejectionLabels(spec.labels, expandTurns(p.train), {
      rt: host.rt,
      seed: spec.seed,
      weightOf: (s) => masks.get(s.trajectoryId)?.turns[s.turnIndex]?.weight ?? 1,
      // A resumed run's `from` is its own last checkpoint, not the teacher.
      teacherCheckpoint: extra.teacherCheckpoint ?? (p.start.step === 0 ? from : undefined),
      teacherApiKey: extra.teacherApiKey,
      judgeApiKey: extra.judgeApiKey,
      log: (m) => host.log(m),
      metric: (step, v) => host.metric(step, v),
    });
  }
  if (spec.answerRoom !== undefined && spec.answerRoom > p.T / 2)
    throw new UserFacingError(`answerRoom ${spec.answerRoom} leaves the prompt less than half of the ${p.T}-token rows; at most ${Math.floor(p.T / 2)}`);
  const labelled = spec.stage === 'sft' && sftLabels?.length ? trainLabels(sftLabels, p, masks, host) : null;
  const rows = labelled
    ? labelledRows(p, labelled, spec.templates, spec.seed, spec.templateSet, undefined, spec.answerRoom)
    : stageRows(spec.stage, p, p.train, spec.templates, spec.seed, true, spec.templateSet, masks, spec.rows, spec.answerRoom);
  if (spec.stage === 'sft' && spec.rows === 'trajectory' && !labelled)
    host.log(`trajectory rows: ${rows.length} rows train the ${expandTurns(p.train).length} observations of ${p.train.length} trajectories`);
  else if (spec.stage === 'sft') host.log(templateCountsLine(spec.templates, labelled ? labelled.map((l) => l.sample) : expandTurns(p.train), spec.seed));
  const evalRows = evalRowsOf(spec.stage, p, p.eval.length ? p.eval : p.train.slice(0, 1), spec.evalTemplates, spec.seed, spec.templateSet, masks);
  if (rows.length === 0) throw new UserFacingError(`the ${spec.stage} stage found no training rows in this dataset`);
  return { rows, evalRows };
}

/** Which template versions render the SFT rows, and how many each (the stage's mix as drawn). */
export function templateCountsLine(dist: TemplateDistribution, samples: readonly TurnSample[], seed: number): string {
  const counts = versionCounts(dist, samples, seed);
  return `templates of the ${samples.length} training rows: ${Object.entries(counts)
    .map(([v, n]) => `${v} ${n}`)
    .join(', ')}`;
}

interface SupervisedRun {
  model: GpuTrainer;
  gen: GpuGenerator;
  sampler: BatchSampler;
  evalBatches: EvalBatch[];
  unigram: number;
}

/** The training steps, with evaluation and checkpoints every spec.evalEvery steps. */
async function supervisedLoop(
  spec: ResolvedSpec,
  p: Prepared,
  host: TrainHost,
  r: SupervisedRun,
  bestIn: TrainResult['best'],
): Promise<Omit<TrainResult, 'coverage'>> {
  const { model, gen, sampler, evalBatches, unigram } = r;
  const schedule = { maxLr: spec.lr.peak, minLr: spec.lr.min, warmupSteps: spec.lr.warmup, totalSteps: spec.steps };
  let best = bestIn;
  let lastEval: number | null = null;
  let byDomain: DomainFigures | undefined;
  let tokens = 0;
  let ms = 0;
  const evaluate = async (step: number) => {
    let sum = 0;
    // The loss of each domain's rows besides the loss over all: eval_loss/<domain> (domainMetrics.ts).
    const perDomain = new DomainMeans();
    for (const b of evalBatches) {
      const r = await model.model.evalTokenLosses(b.batch);
      sum += r.loss;
      addBatchLosses(perDomain, b.batch, r.nll, b.domains);
    }
    const evalLoss = sum / Math.max(1, evalBatches.length);
    const judged = spec.stage === 'sft' && spec.evalJudgeSamples > 0 ? await judgeEval(gen, p, spec) : null;
    const values = { eval_loss: evalLoss, unigram_loss: unigram, ...perDomain.metrics(), ...(judged ?? {}) };
    host.metric(step, values);
    byDomain = domainFigures(values);
    const line = domainFiguresLine(step, byDomain);
    if (line) host.log(line);
    lastEval = evalLoss;
    return evalLoss;
  };
  for (let step = model.step; step < spec.steps; step++) {
    await host.step();
    const batch = sampler.batch(step);
    const lr = lrAt(step, schedule);
    const t0 = performance.now();
    const res = await model.trainStep(batch, lr, { loss: true, gradNorm: true });
    const dt = performance.now() - t0;
    tokens += batch.B * batch.T;
    ms += dt;
    host.metric(step + 1, { loss: res.loss!, lr, grad_norm: res.gradNorm!, tokens_per_s: (batch.B * batch.T) / (dt / 1000) });
    if ((step + 1) % spec.evalEvery === 0 || step + 1 === spec.steps) {
      const evalLoss = await evaluate(step + 1);
      const bytes = await runCheckpointBytes(model, p, spec);
      await host.checkpoint(bytes, { step: step + 1, tag: 'last', evalLoss });
      if (!best || evalLoss < best.evalLoss) {
        best = { step: step + 1, evalLoss };
        await host.checkpoint(bytes, { step: step + 1, tag: 'best', evalLoss });
      }
    }
  }
  const final = await runCheckpointBytes(model, p, spec);
  return {
    stage: spec.stage,
    steps: spec.steps,
    checkpoint: final,
    best,
    evalLoss: lastEval,
    unigramLoss: unigram,
    tokensPerSecond: ms > 0 ? tokens / (ms / 1000) : 0,
    ...(byDomain && Object.keys(byDomain).length ? { evalByDomain: byDomain } : {}),
  };
}

/**
 * Generates predictions for a few eval samples and scores them with the local judge: one turn per
 * trajectory, one domain after another (interleaveSamples), so n samples cover min(n, D) domains;
 * the mean total of each domain's samples as eval_judge_mean/<domain>.
 */
async function judgeEval(gen: GpuGenerator, p: Prepared, spec: ResolvedSpec): Promise<Record<string, number>> {
  const pool = judgedEvalSamples(p, spec.seed, spec.evalJudgeSamples);
  const perDomain = new DomainMeans();
  const sums: Record<string, number> = {};
  let n = 0;
  for (const sample of pool) {
    const template = templateForSample(spec.evalTemplates, sample, spec.seed, spec.templateSet);
    const maxNew = Math.min(spec.rl.maxNewTokens, Math.floor(p.config.contextLength / 4));
    const prompt = encodePrompt(p.tok, sample, template, p.config.contextLength - maxNew);
    const out: number[] = [];
    for await (const t of gen.generate(prompt, { maxNewTokens: maxNew, sampling: { temperature: 0 }, stop: [...p.tok.observationStops] })) out.push(t);
    const prediction = extractPrediction(template.targetOpen + p.tok.decode(out));
    const v = await localJudge.judge(judgeInputFor(sample, renderSystem(template, sample), prediction));
    if (v.failed) continue;
    n++;
    for (const d of DIMENSIONS) sums[`eval_judge_${d}`] = (sums[`eval_judge_${d}`] ?? 0) + v.scores[d];
    sums.eval_judge_mean = (sums.eval_judge_mean ?? 0) + v.total;
    perDomain.add(sample.domain, 'eval_judge_mean', v.total);
  }
  return { ...Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v / Math.max(1, n)])), ...perDomain.metrics() };
}
