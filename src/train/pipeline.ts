// The three training stages of docs/method.md §5–§7 on the GPU model, as one job that runs the same in a
// Web Worker (the app) and in Node (`lwm train`):
//
//   CPT  next-token prediction on packed text: each domain's knowledge text (manual pages, tool
//        schemas, corpus documents) plus whole trajectories rendered with the CPT template.
//   SFT  turn samples rendered with templates drawn from the SFT distribution; loss on the target
//        observation only, each token weighted by its turn's mask ratio (docs/method.md §4).
//   RL   GSPO on the RL pool (one turn per trajectory): G samples per prompt from a shared-prefix
//        rollout, rewards by the chosen kind (rubric judge + rule verifier 0.9 / 0.1, or the
//        binary reference comparison or Turing test) from the local or an endpoint judge,
//        advantages normalised within each group, one optimizer step per group so later groups
//        of a rollout batch see a policy that has moved (the ratio matters). Evaluation writes
//        greedy predictions for held-out turns and keeps the best checkpoint by their reward.
//
// Every stage: warmup + cosine learning rate, evaluation every N steps on the eval split (loss,
// and the local judge on a few generated predictions), the best checkpoint kept, a checkpoint
// that resumes the same loss curve.
//
// The stages live in ./stages/ (common.ts: spec and preparation; rows.ts: the rows a stage trains
// on; sft.ts: CPT and SFT; rl.ts: GSPO); this file is the front door the app, the CLI and the
// jobs use.
import type { Trajectory } from '../core/schema/types.ts';
import { chatWrap, wrapTemplates } from './chat.ts';
import { rewardJudges } from './rlMetrics.ts';
import type { TrainSpec } from '../core/trainSpec.ts';
import { prepare, resolveSpec, type Prepared, type ResolvedSpec, type RunExtra, type TrainHost, type TrainResult } from './stages/common.ts';
import { runRl } from './stages/rl.ts';
import { runSupervised } from './stages/sft.ts';

// The spec types live in spec.ts, where storage and the app can import them without the
// pipeline; its own importers may still take them from here.
export type { Stage, TrainSpec } from '../core/trainSpec.ts';
export {
  hfCheckpointMetadata,
  prepare,
  resolveSpec,
  type Prepared,
  type ResolvedSpec,
  type RunExtra,
  type TrainHost,
  type TrainResult,
} from './stages/common.ts';
export { evalBatchesOf, evalRows, judgedEvalSamples, labelledRows, stageRows, trainLabels, unigramLoss } from './stages/rows.ts';

/**
 * A pretrained model sees every sample in its own chat format (chat.ts): the run's templates are
 * wrapped in it; its checkpoints keep them as written (p.hf.templates), which a backend wraps again
 * to serve the fine-tune the same way (src/backends/trainedChat.ts). Nothing for a model of ours.
 */
export function wrapRunTemplates(spec: ResolvedSpec, p: Prepared): void {
  if (!p.hf) return;
  p.hf.templates = spec.templateSet;
  spec.templateSet = wrapTemplates(spec.templateSet, chatWrap(p.hf.opened.tokenizer));
}

/** Runs one stage. Resumable: a checkpoint from this stage continues at its step. */
export async function runTraining(
  specIn: TrainSpec,
  trajectories: Trajectory[],
  host: TrainHost,
  from?: Uint8Array,
  extra: RunExtra = {},
): Promise<TrainResult> {
  const spec = resolveSpec(specIn);
  if (spec.stage === 'sft' && extra.sftLabels?.length) spec.sftLabelled = true;
  const p = prepare(spec, trajectories, from, extra.hfBase);
  wrapRunTemplates(spec, p);
  if (p.lora)
    host.log(
      `LoRA: rank ${p.lora.layout.settings.rank}, alpha ${p.lora.layout.settings.alpha} on ${p.lora.layout.settings.targets.join(', ')}: ${p.lora.layout.totalSize} adapter values train, the ${p.start.params.length} base weights are frozen${p.lora.baseWeights === 'f16' ? ' (held in f16 on the GPU)' : ''}`,
    );
  host.log(
    `${spec.stage}: ${p.train.length} train / ${p.eval.length} eval trajectories; model ${JSON.stringify(p.config)}; tokenizer ${p.tok.vocabSize} tokens; ${p.T} tokens per sequence`,
  );
  if (spec.stage === 'rl') {
    const judges = extra.rewardJudges ?? rewardJudges(spec.rl.rewardJudge, spec.rl.judgeEndpoint && { ...spec.rl.judgeEndpoint, apiKey: extra.judgeApiKey });
    return runRl(spec, p, host, judges, p.start.step > 0 ? extra.bestSoFar : undefined);
  }
  return runSupervised(spec, p, host, from, extra);
}
