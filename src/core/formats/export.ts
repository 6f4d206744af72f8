// Exporters: our JSONL, AgentWorldBench JSONL, and SFT / RL datasets for TRL and verl. Each
// yields one JSON line at a time (no trailing newline) so large datasets stream to a file.
import type { Trajectory } from '../schema/types.ts';
import { categorizeDataset, DEFAULT_MASK_CONFIG, type MaskCategory, type MaskConfig } from '../masking/index.ts';
import { rlPool, turnSample, type TurnSample } from '../turns/index.ts';
import {
  BUILTIN_TEMPLATES,
  DEFAULT_STAGE_TEMPLATES,
  renderChat,
  renderSample,
  templateForSample,
  type PromptTemplate,
  type TemplateDistribution,
} from '../templates/index.ts';
import { toAgentWorldBenchRecords } from './agentworldbench.ts';

export const EXPORT_TARGETS = ['native', 'agentworldbench', 'trl', 'verl'] as const;
export type ExportTarget = (typeof EXPORT_TARGETS)[number];

export function* exportNative(trajectories: Iterable<Trajectory>): Generator<string> {
  for (const t of trajectories) yield JSON.stringify(t);
}

export function* exportAgentWorldBench(trajectories: Iterable<Trajectory>): Generator<string> {
  for (const t of trajectories) for (const r of toAgentWorldBenchRecords(t)) yield JSON.stringify(r);
}

export interface TrainingExportOptions {
  /** 'sft': every turn; 'rl': the RL pool, one turn per trajectory. */
  kind?: 'sft' | 'rl';
  /** Template mix; defaults to the stage's default (DEFAULT_STAGE_TEMPLATES.sft / .rl). */
  templates?: TemplateDistribution;
  templateSet?: Readonly<Record<string, PromptTemplate>>;
  seed?: number;
  mask?: MaskConfig;
}

interface PreparedSample {
  sample: TurnSample;
  template: PromptTemplate;
  category: MaskCategory;
  weight: number;
}

function* prepare(trajectories: Trajectory[], o: TrainingExportOptions): Generator<PreparedSample> {
  const kind = o.kind ?? 'sft';
  const seed = o.seed ?? 0;
  const dist = o.templates ?? DEFAULT_STAGE_TEMPLATES[kind];
  const set = o.templateSet ?? BUILTIN_TEMPLATES;
  // Categories need the whole dataset (boilerplate is about recurrence across it).
  const masks = categorizeDataset(trajectories, o.mask ?? DEFAULT_MASK_CONFIG);
  for (let ti = 0; ti < trajectories.length; ti++) {
    const t = trajectories[ti];
    // The RL pool's choice depends only on the trajectory's id and the seed.
    const samples = kind === 'rl' ? rlPool([t], seed) : t.turns.map((_, i) => turnSample(t, i));
    for (const s of samples) {
      const m = masks[ti].turns[s.turnIndex];
      yield { sample: s, template: templateForSample(dist, s, seed, set), category: m.category, weight: m.weight };
    }
  }
}

const info = (p: PreparedSample) => ({
  trajectory_id: p.sample.trajectoryId,
  turn_index: p.sample.turnIndex,
  domain: p.sample.domain,
  template: p.template.version,
  mask_category: p.category,
  loss_weight: p.weight,
});

/**
 * TRL: SFT rows in the conversational prompt-completion layout (loss on the completion, the
 * target observation, by SFTTrainer's completion-only loss); RL rows with a `prompt` and the
 * `reference` observation, which GRPOTrainer passes to reward functions as a keyword argument.
 */
export function* exportTrl(trajectories: Trajectory[], options: TrainingExportOptions = {}): Generator<string> {
  const kind = options.kind ?? 'sft';
  for (const p of prepare(trajectories, options)) {
    const chat = renderChat(p.template, p.sample);
    if (kind === 'sft') yield JSON.stringify({ prompt: chat.prompt, completion: [chat.completion], ...info(p) });
    else yield JSON.stringify({ prompt: chat.prompt, reference: p.sample.targetObservation, ...info(p) });
  }
}

/**
 * verl: SFT rows with `prompt`/`response` strings (its single-turn SFT dataset puts loss on the
 * response only) and the full `messages`; RL rows in verl's RL layout (data_source, prompt,
 * ability, reward_model.ground_truth, extra_info).
 */
export function* exportVerl(trajectories: Trajectory[], options: TrainingExportOptions = {}): Generator<string> {
  const kind = options.kind ?? 'sft';
  for (const p of prepare(trajectories, options)) {
    const chat = renderChat(p.template, p.sample);
    if (kind === 'sft') {
      const r = renderSample(p.template, p.sample);
      yield JSON.stringify({
        prompt: r.text.slice(0, r.promptEnd),
        response: r.text.slice(r.promptEnd),
        messages: [...chat.prompt, chat.completion],
        extra_info: info(p),
      });
    } else {
      yield JSON.stringify({
        data_source: `lwm/${p.sample.domain}`,
        prompt: chat.prompt,
        ability: 'world_model',
        reward_model: { style: 'model', ground_truth: p.sample.targetObservation },
        extra_info: info(p),
      });
    }
  }
}

export function exportLines(target: ExportTarget, trajectories: Trajectory[], options: TrainingExportOptions = {}): Generator<string> {
  switch (target) {
    case 'native':
      return exportNative(trajectories);
    case 'agentworldbench':
      return exportAgentWorldBench(trajectories);
    case 'trl':
      return exportTrl(trajectories, options);
    case 'verl':
      return exportVerl(trajectories, options);
  }
}
