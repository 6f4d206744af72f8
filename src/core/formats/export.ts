// Exporters: our JSONL, AgentWorldBench JSONL, and SFT / RL datasets for TRL and verl. Each
// yields one JSON line at a time (no trailing newline) so large datasets stream to a file; verl's
// rows also go out as one Parquet file (exportVerlParquet), the format verl reads.
import type { Trajectory } from '../schema/types.ts';
import { categorizeDataset, DEFAULT_MASK_CONFIG, type MaskCategory, type MaskConfig } from '../masking/index.ts';
import { rlPool, turnSample, type TurnSample } from '../turns/index.ts';
import {
  BUILTIN_TEMPLATES,
  DEFAULT_STAGE_TEMPLATES,
  renderChat,
  templateForSample,
  type PromptTemplate,
  type TemplateDistribution,
} from '../templates/index.ts';
import { toAgentWorldBenchRecords } from './agentworldbench.ts';
import { systemPromptToText } from './systemPromptText.ts';
import { LIMITS, sizeText } from '../limits.ts';
import { writeParquet, type ParquetColumns, type ParquetField } from './parquet.ts';

export const EXPORT_TARGETS = ['native', 'agentworldbench', 'trl', 'verl'] as const;
export type ExportTarget = (typeof EXPORT_TARGETS)[number];

export function* exportNative(trajectories: Iterable<Trajectory>): Generator<string> {
  for (const t of trajectories) yield JSON.stringify(t);
}

export function* exportAgentWorldBench(trajectories: Iterable<Trajectory>): Generator<string> {
  for (const t of trajectories) for (const r of toAgentWorldBenchRecords(t)) yield JSON.stringify(r);
}

export const TRAINING_EXPORT_KINDS = ['sft', 'rl', 'multiturn'] as const;
export type TrainingExportKind = (typeof TRAINING_EXPORT_KINDS)[number];

export interface TrainingExportOptions {
  /**
   * 'sft': one row per turn; 'rl': the RL pool, one turn per trajectory; 'multiturn' (verl only):
   * one row per trajectory holding every turn, each observation a trained assistant message.
   */
  kind?: TrainingExportKind;
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
  const kind = o.kind === 'rl' ? 'rl' : 'sft';
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
  if (kind === 'multiturn') throw new Error("the 'multiturn' kind is for verl; TRL takes 'sft' or 'rl'");
  for (const p of prepare(trajectories, options)) {
    const chat = renderChat(p.template, p.sample);
    if (kind === 'sft') yield JSON.stringify({ prompt: chat.prompt, completion: [chat.completion], ...info(p) });
    else yield JSON.stringify({ prompt: chat.prompt, reference: p.sample.targetObservation, ...info(p) });
  }
}

const MESSAGES: ParquetField = { list: { struct: { role: 'string', content: 'string' } } };
const TURN_INFO: ParquetField = {
  struct: {
    trajectory_id: 'string',
    turn_index: 'int64',
    domain: 'string',
    template: 'string',
    mask_category: 'string',
    loss_weight: 'double',
    index: 'int64',
  },
};

/** The Parquet columns of each verl row kind, in the order the rows list them. */
export const VERL_COLUMNS: Readonly<Record<TrainingExportKind, ParquetColumns>> = {
  sft: { data_source: 'string', prompt: MESSAGES, response: 'string', ability: 'string', extra_info: TURN_INFO },
  rl: {
    data_source: 'string',
    prompt: MESSAGES,
    ability: 'string',
    reward_model: { struct: { style: 'string', ground_truth: 'string' } },
    extra_info: TURN_INFO,
  },
  multiturn: {
    data_source: 'string',
    messages: MESSAGES,
    ability: 'string',
    extra_info: {
      struct: {
        trajectory_id: 'string',
        domain: 'string',
        template: 'string',
        turns: 'int64',
        turn_mask_categories: { list: 'string' },
        turn_loss_weights: { list: 'double' },
        index: 'int64',
      },
    },
  },
};

/**
 * verl rows as objects, `extra_info.index` numbering them from 0.
 * - sft: `{data_source, prompt: [messages], response, ability, extra_info}`, one per turn; the
 *   prompt is the RL prompt's chat layout (system, then actions as user and observations as
 *   assistant messages), the response the wrapped target observation.
 * - rl: `{data_source, prompt, ability, reward_model: {style: "rule", ground_truth}, extra_info}`,
 *   one per trajectory (the RL pool). verl skips validation of `style: "model"` rows when a reward
 *   model is enabled; our reward is a function of the output and the ground truth, i.e. a rule
 *   (`custom_reward_function`, see docs/data-formats.md).
 * - multiturn: `{data_source, messages, ability, extra_info}`, one per trajectory, for verl's
 *   multi-turn SFT dataset, which trains on every assistant message: each observation once, with
 *   the whole history before it as context. `extra_info.turn_loss_weights[k]` is the mask weight
 *   of the k-th assistant message (verl's stock dataset weighs them all 1; a custom dataset class
 *   can scale its loss mask by them).
 */
export function* verlRows(trajectories: Trajectory[], options: TrainingExportOptions = {}): Generator<Record<string, unknown>> {
  const kind = options.kind ?? 'sft';
  let index = 0;
  if (kind === 'multiturn') {
    const seed = options.seed ?? 0;
    const dist = options.templates ?? DEFAULT_STAGE_TEMPLATES.sft;
    const set = options.templateSet ?? BUILTIN_TEMPLATES;
    const masks = categorizeDataset(trajectories, options.mask ?? DEFAULT_MASK_CONFIG);
    for (let ti = 0; ti < trajectories.length; ti++) {
      const t = trajectories[ti];
      if (!t.turns.length) continue;
      // One template per trajectory: the draw of its first turn.
      const template = templateForSample(dist, { trajectoryId: t.id, turnIndex: 0 }, seed, set);
      const chat = renderChat(template, turnSample(t, t.turns.length - 1));
      // Every observation is a target here, so each is wrapped as the model must write it.
      const wrap = (m: (typeof chat.prompt)[number]) =>
        m.role === 'assistant' ? { role: m.role, content: `${template.targetOpen}${m.content}${template.targetClose}` } : { role: m.role, content: m.content };
      const turnMasks = masks[ti].turns;
      yield {
        data_source: `lwm/${t.domain}`,
        messages: [...chat.prompt.map(wrap), chat.completion],
        ability: 'world_model',
        extra_info: {
          trajectory_id: t.id,
          domain: t.domain,
          template: template.version,
          turns: t.turns.length,
          turn_mask_categories: turnMasks.map((m) => m.category),
          turn_loss_weights: turnMasks.map((m) => m.weight),
          index: index++,
        },
      };
    }
    return;
  }
  for (const p of prepare(trajectories, options)) {
    const chat = renderChat(p.template, p.sample);
    const extra_info = { ...info(p), index: index++ };
    if (kind === 'sft') {
      yield { data_source: `lwm/${p.sample.domain}`, prompt: chat.prompt, response: chat.completion.content, ability: 'world_model', extra_info };
    } else {
      yield {
        data_source: `lwm/${p.sample.domain}`,
        prompt: chat.prompt,
        ability: 'world_model',
        reward_model: { style: 'rule', ground_truth: p.sample.targetObservation },
        extra_info,
      };
    }
  }
}

/** verl rows as JSON lines. */
export function* exportVerl(trajectories: Trajectory[], options: TrainingExportOptions = {}): Generator<string> {
  for (const r of verlRows(trajectories, options)) yield JSON.stringify(r);
}

/** verl rows as one Parquet file (what verl's datasets read, through pandas.read_parquet). */
export function exportVerlParquet(trajectories: Trajectory[], options: TrainingExportOptions = {}): { bytes: Uint8Array; rows: number } {
  const rows = [...verlRows(trajectories, options)];
  return { bytes: writeParquet(rows, VERL_COLUMNS[options.kind ?? 'sft']), rows: rows.length };
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

/** JSON escapes of newlines and quotes, field names and turn headers: characters a turn adds beyond its text. */
const TURN_OVERHEAD = 64;
const RECORD_OVERHEAD = 160;
/** TRL and verl rows also carry the template's scaffolding and the row's info. */
const ROW_OVERHEAD = 450;

/**
 * About how many characters an export writes. AgentWorldBench records and SFT rows (TRL, verl)
 * repeat a trajectory's history in every turn, so they grow with the square of its turns: one
 * 10,000-turn trajectory is gigabytes. Counted from the text lengths, without building anything.
 */
export function estimateExportChars(target: ExportTarget, trajectories: readonly Trajectory[], options: { kind?: TrainingExportKind } = {}): number {
  const perTurn = target === 'agentworldbench' || ((target === 'trl' || target === 'verl') && (options.kind ?? 'sft') === 'sft');
  const overhead = target === 'trl' || target === 'verl' ? ROW_OVERHEAD : RECORD_OVERHEAD;
  let total = 0;
  for (const t of trajectories) {
    const system = systemPromptToText(t.system_prompt).length;
    let history = 0;
    for (const turn of t.turns) {
      // A turn's action is written twice in AgentWorldBench (prompt and current_prompt).
      const text = turn.action.length + turn.observation.length + TURN_OVERHEAD;
      history += text;
      if (perTurn) total += system + history + overhead + (target === 'agentworldbench' ? turn.action.length : 0);
    }
    if (!perTurn) total += system + history + overhead;
  }
  return total;
}

/** A warning when an export would be over LIMITS.exportWarnChars, saying how big; undefined otherwise. */
export function exportSizeWarning(target: ExportTarget, trajectories: readonly Trajectory[], options: { kind?: TrainingExportKind } = {}): string | undefined {
  const n = estimateExportChars(target, trajectories, options);
  if (n <= LIMITS.exportWarnChars) return undefined;
  const why =
    target === 'native' || options.kind === 'rl' || options.kind === 'multiturn'
      ? ''
      : ` (${target === 'agentworldbench' ? 'AgentWorldBench records' : 'SFT rows'} repeat each trajectory's history in every turn)`;
  return `this export will be about ${sizeText(n, false)}${why}`;
}
