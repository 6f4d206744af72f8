// The Sim RL panel's pure parts: its form (strings as typed) checked into an experiment draft
// with an error per field, and the curves and results drawn from an experiment's state.
import type { KnownDomain } from '../../../core/schema/types.ts';
import { PRESETS, type PresetName } from '../../../core/model/config.ts';
import type { RunRecord } from '../../../core/records.ts';
import { probedTaskFamilies, TASK_DOMAINS, taskFamilies } from '../../../envs/tasks/index.ts';
import { AGENT_DEFAULTS, type AgentEval } from '../../../train/agent/run.ts';
import { familyBudgets, familyNeeds } from '../../../train/agent/budgets.ts';
import { ENDPOINT_WORLD_CONCURRENCY } from '../../../train/agent/simWorld.ts';
import { DEFAULT_ARMS, experimentResults, needsWorld, type AgentArm, type AgentArmResult } from '../../../train/agent/experiment.ts';
import type { ExperimentView } from '../../../jobs/simrlView.ts';
import type { ExperimentDraft } from '../../stores/simrl.ts';
import { normalBaseUrl, type EndpointSettings } from '../../stores/endpoints.ts';
import { folderName, type HfFolderFile } from '../../../train/hfFolder.ts';

/** The numeric fields, in the form's order: each with its least value and a hint. */
export const SIMRL_NUMBERS = {
  T: { min: 16, label: 'Policy context (T)', hint: 'prompt and action; the model’s context caps it' },
  maxNewTokens: { min: 2, label: 'Action tokens', hint: 'most tokens of one action, its end included' },
  trainTasks: { min: 1, label: 'Train tasks', hint: 'train-split tasks imitated (and drawn for RL)' },
  evalTasks: { min: 1, label: 'Held-out tasks', hint: 'tasks of each evaluation, checked in the real environment' },
  sftSteps: { min: 0, label: 'Imitation steps', hint: 'SFT on the reference solvers, shared by all arms' },
  rlSteps: { min: 1, label: 'RL steps per arm', hint: 'GSPO steps of each RL stage' },
  rlWarmup: { min: 0, label: 'RL warm-up steps', hint: 'steps over which each RL stage’s learning rate rises to its peak' },
  evalEvery: { min: 1, label: 'Held-out evaluation every', hint: 'RL steps between held-out evaluations' },
  batch: { min: 1, label: 'Rows per update', hint: 'rows per optimizer step' },
  group: { min: 2, label: 'Episodes per group', hint: 'episodes per task in a GSPO group' },
  tasksPerStep: { min: 1, label: 'Tasks per RL step', hint: 'GSPO groups per step' },
  seed: { min: 0, label: 'Seed', hint: 'batches, rollouts and the model’s initialization' },
  worldMaxTokens: { min: 1, label: 'World model answer tokens', hint: 'most tokens of one simulated observation' },
} as const;

export type SimRlNumber = keyof typeof SIMRL_NUMBERS;

/** The real-valued fields: each above 0 and at most its max (below it where the max is open). */
export const SIMRL_REALS = {
  sftLr: { max: 1, open: true, label: 'Imitation learning rate', hint: 'peak of the SFT stage’s schedule' },
  rlLr: { max: 1, open: true, label: 'RL learning rate', hint: 'peak of each GSPO stage; above 3e-4 it can wreck the imitation policy (method §13)' },
  temperature: { max: 10, open: false, label: 'Rollout temperature', hint: 'sampling temperature of the RL episodes' },
} as const;

export type SimRlReal = keyof typeof SIMRL_REALS;

export interface SimRlForm extends Record<SimRlNumber | SimRlReal, string> {
  name: string;
  domain: string;
  families: string[];
  arms: AgentArm[];
  /** A preset's name, or HF_POLICY (a Hugging Face folder). */
  preset: string;
  /** 'copy-last', a stored checkpoint's key, or an endpoint's (endpointWorldKey). */
  world: string;
  /** The Hugging Face folder's files (preset HF_POLICY). */
  hfFiles: HfFolderFile[];
  /** Its LoRA rank; blank: fine-tuned whole. */
  loraRank: string;
  /** The GPU memory the run may take, GiB (WebGPU does not report it). */
  memoryGiB: string;
}

const withName = (name: string | null) => (name === null ? {} : { name });

/** The policy choice that is a Hugging Face folder rather than a preset. */
export const HF_POLICY = 'hf-folder';

export type SimRlErrors = Partial<Record<keyof SimRlForm, string>>;

/** Domains with task families (src/envs/tasks). */
export const SIMRL_DOMAINS = Object.keys(TASK_DOMAINS) as KnownDomain[];

/** The families of `domain` the world-model agents can be rewarded on: those with a probe ([] for a domain without tasks). */
export function simulatedCheckFamilies(domain: string): string[] {
  return (SIMRL_DOMAINS as string[]).includes(domain) ? probedTaskFamilies(domain as KnownDomain) : [];
}

/** The form's budgets for families of a domain (familyBudgets: what a fresh preset policy's run on them needs). */
export function budgetDefaults(domain: string, families: readonly string[]): Pick<SimRlForm, 'T' | 'maxNewTokens' | 'sftSteps'> {
  const b = familyBudgets(domain, families);
  return { T: String(b.T), maxNewTokens: String(b.maxNewTokens), sftSteps: String(b.sftSteps) };
}

/**
 * `next`, a form whose domain or families changed from `prev`'s, with its budgets following them:
 * each of T and the action budget that still held the budget offered for `prev`'s families takes
 * the one offered for `next`'s; a value the person typed stays.
 */
export function followBudgets(prev: SimRlForm, next: SimRlForm): SimRlForm {
  if (prev.domain === next.domain && prev.families.join() === next.families.join()) return next;
  const was = budgetDefaults(prev.domain, prev.families);
  const now = budgetDefaults(next.domain, next.families);
  return {
    ...next,
    ...(next.T === was.T && { T: now.T }),
    ...(next.maxNewTokens === was.maxNewTokens && { maxNewTokens: now.maxNewTokens }),
    ...(next.sftSteps === was.sftSteps && { sftSteps: now.sftSteps }),
  };
}

/** The form's defaults: a laptop's size (bench preset, compact layout) with AGENT_DEFAULTS, and budgets that fit the first family. */
export function defaultSimRlForm(domain: string = SIMRL_DOMAINS.includes('terminal') ? 'terminal' : SIMRL_DOMAINS[0]): SimRlForm {
  const d = AGENT_DEFAULTS;
  const families = taskFamilies(domain).slice(0, 1);
  return {
    name: '',
    domain,
    families,
    arms: [...DEFAULT_ARMS],
    preset: 'bench',
    world: 'copy-last',
    hfFiles: [],
    loraRank: '',
    memoryGiB: '4',
    ...budgetDefaults(domain, families),
    trainTasks: String(d.trainTasks),
    evalTasks: String(d.evalTasks),
    rlSteps: '20',
    rlWarmup: String(d.rlWarmup ?? 0),
    evalEvery: String(d.evalEvery),
    batch: String(d.batch),
    group: String(d.group),
    tasksPerStep: String(d.tasksPerStep),
    seed: String(d.seed),
    worldMaxTokens: '64',
    sftLr: String(d.sftLr),
    rlLr: String(d.rlLr),
    temperature: String(d.temperature),
  };
}

/** A world model the picker offers: a run's last or best checkpoint, or an endpoint set up on this device. */
export interface WorldChoice {
  key: string;
  label: string;
  /** The world as the experiment stores it. */
  ref: Exclude<ExperimentDraft['world'], null | { kind: 'copy-last' }>;
}

/** The key of an endpoint's choice (a checkpoint's is its storage key). */
export const endpointWorldKey = (id: string) => `endpoint:${id}`;

/**
 * The picker's choices: each run's stored checkpoints, then the endpoints set up here (`lwm serve`
 * serves a world model there; the key stays on this device and goes with each job).
 */
export function worldChoices(runs: readonly RunRecord[], endpoints: readonly EndpointSettings[] = []): WorldChoice[] {
  const out: WorldChoice[] = [];
  for (const r of runs)
    for (const tag of ['last', 'best'] as const) {
      const c = r.checkpoints[tag];
      if (!c) continue;
      const label = `${r.name} · ${tag} (step ${c.step})`;
      out.push({ key: c.key, label, ref: { kind: 'checkpoint', checkpoint: { key: c.key, label, runId: r.id, runName: r.name, tag, step: c.step } } });
    }
  for (const e of endpoints) {
    const baseUrl = normalBaseUrl(e.baseUrl);
    out.push({
      key: endpointWorldKey(e.id),
      label: `${e.model.trim()} at ${baseUrl}`,
      ref: { kind: 'endpoint', endpoint: { baseUrl, model: e.model.trim(), stream: e.stream, concurrency: ENDPOINT_WORLD_CONCURRENCY } },
    });
  }
  return out;
}

/**
 * The form checked: a draft to start, or what is wrong with each field. A preset policy's budgets
 * are checked against what its families' actions and goals measured (FAMILY_BUDGETS), so a run
 * they do not fit is refused here, before an experiment is stored; the job checks the run's own
 * data again when it opens (a Hugging Face policy's tokenizer is the folder's: only the job can).
 */
export function simRlDraft(form: SimRlForm, worlds: readonly WorldChoice[]): { draft: ExperimentDraft } | { errors: SimRlErrors } {
  const errors: SimRlErrors = {};
  const n: Partial<Record<SimRlNumber, number>> = {};
  for (const [k, f] of Object.entries(SIMRL_NUMBERS) as [SimRlNumber, (typeof SIMRL_NUMBERS)[SimRlNumber]][]) {
    const text = form[k].trim();
    const v = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(v) || v < f.min) errors[k] = `${f.label}: a whole number ≥ ${f.min}, not '${form[k]}'.`;
    else n[k] = v;
  }
  const r: Partial<Record<SimRlReal, number>> = {};
  for (const [k, f] of Object.entries(SIMRL_REALS) as [SimRlReal, (typeof SIMRL_REALS)[SimRlReal]][]) {
    const text = form[k].trim();
    const v = text === '' ? Number.NaN : Number(text);
    if (!Number.isFinite(v)) errors[k] = `${f.label}: a number such as ${String(AGENT_DEFAULTS[k])}, not '${form[k]}'.`;
    else if (!(v > 0 && (f.open ? v < f.max : v <= f.max))) errors[k] = `${f.label}: above 0 and ${f.open ? 'below' : 'at most'} ${f.max}, not ${v}.`;
    else r[k] = v;
  }
  const domain = form.domain as KnownDomain;
  if (!SIMRL_DOMAINS.includes(domain)) errors.domain = `Task domain: one of ${SIMRL_DOMAINS.join(', ')}, not '${form.domain}'.`;
  else {
    const known = taskFamilies(domain);
    const unknown = form.families.filter((f) => !known.includes(f));
    if (!form.families.length) errors.families = `Task families: pick at least one of ${known.join(', ')}.`;
    else if (unknown.length) errors.families = `Task families: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not in ${domain}.`;
    else if (needsWorld(form.arms)) {
      // The world-model agents are rewarded by the world model's answer to the family's probe: a family without one cannot be.
      const probed = simulatedCheckFamilies(domain);
      const without = form.families.filter((f) => !probed.includes(f));
      if (without.length)
        errors.families = probed.length
          ? `Task families: ${without.join(', ')} ${without.length === 1 ? 'has' : 'have'} no simulated check, so the world-model agents cannot be rewarded on ${without.length === 1 ? 'it' : 'them'}; ${domain}'s families with one: ${probed.join(', ')}.`
          : `Task families: no family of ${domain} has a simulated check yet, so the world-model agents cannot be rewarded; leave them out, or pick another domain.`;
    }
  }
  if (!form.arms.length) errors.arms = 'Agents: pick at least one.';
  else if (form.arms.includes('model-real') && !form.arms.includes('model'))
    errors.arms = 'Agents: “then in the real environment” goes on from the world-model agent; pick that one too.';
  const hf = form.preset === HF_POLICY;
  if (!hf && !Object.hasOwn(PRESETS, form.preset)) errors.preset = `Policy model: one of ${Object.keys(PRESETS).join(', ')}, not '${form.preset}'.`;
  if (hf && !form.hfFiles.length) errors.hfFiles = 'Hugging Face folder: pick the model folder to train.';
  const rankText = form.loraRank.trim();
  const rank = rankText === '' ? null : /^\d+$/.test(rankText) ? Number(rankText) : Number.NaN;
  if (hf && rank !== null && !(Number.isSafeInteger(rank) && rank >= 1 && rank <= 4096))
    errors.loraRank = `LoRA rank: a whole number from 1 to 4096, or blank to fine-tune every weight; not '${form.loraRank}'.`;
  const memoryGiB = Number(form.memoryGiB.trim() || Number.NaN);
  if (hf && !(memoryGiB > 0 && Number.isFinite(memoryGiB))) errors.memoryGiB = `GPU memory: a number of GiB above 0, not '${form.memoryGiB}'.`;
  const world = needsWorld(form.arms) ? (form.world === 'copy-last' ? ({ kind: 'copy-last' } as const) : worlds.find((w) => w.key === form.world)) : null;
  if (needsWorld(form.arms) && !world) errors.world = 'World model: the world-model agents need one; pick a stored checkpoint, an endpoint or copy-last.';
  if (n.T !== undefined && n.maxNewTokens !== undefined && n.maxNewTokens >= n.T - 8)
    errors.T = `Policy context (T): above ${n.maxNewTokens + 8}, to leave room for a prompt beside an action of up to ${n.maxNewTokens} tokens.`;
  const need = hf || errors.domain || errors.families ? null : familyNeeds(domain, form.families);
  if (need && !errors.T && n.T !== undefined && n.maxNewTokens !== undefined) {
    if (need.action.tokens > n.maxNewTokens)
      errors.maxNewTokens = `Action tokens: at least ${need.action.tokens}, the tokens of ${need.action.family}'s longest action to imitate.`;
    else if (need.prompt.tokens > n.T - n.maxNewTokens + 1)
      errors.T = `Policy context (T): at least ${need.prompt.tokens + n.maxNewTokens - 1}, to hold ${need.prompt.family}'s longest goal (${need.prompt.tokens} tokens with the action's end) beside an action of up to ${n.maxNewTokens} tokens.`;
  }
  if (n.evalEvery !== undefined && n.rlSteps !== undefined && n.evalEvery > n.rlSteps)
    errors.evalEvery = `Held-out evaluation every: at most the RL steps (${n.rlSteps}); each arm is evaluated after its last step anyway.`;
  if (Object.keys(errors).length) return { errors };
  const worldRef = world === null || world === undefined ? null : 'kind' in world ? world : world.ref;
  const worldName = world === null || world === undefined ? undefined : 'kind' in world ? 'copy-last' : world.label;
  return {
    draft: {
      name: form.name,
      spec: {
        train: {
          ...AGENT_DEFAULTS,
          domain,
          families: [...form.families],
          preset: (hf ? AGENT_DEFAULTS.preset : form.preset) as PresetName,
          T: n.T!,
          maxNewTokens: n.maxNewTokens!,
          trainTasks: n.trainTasks!,
          evalTasks: n.evalTasks!,
          sftSteps: n.sftSteps!,
          rlSteps: n.rlSteps!,
          rlWarmup: n.rlWarmup!,
          evalEvery: n.evalEvery!,
          batch: n.batch!,
          group: n.group!,
          tasksPerStep: n.tasksPerStep!,
          seed: n.seed!,
          sftLr: r.sftLr!,
          rlLr: r.rlLr!,
          temperature: r.temperature!,
        },
        arms: [...form.arms],
        ...(worldName && { world: worldName }),
        ...(hf && { policy: { folder: folderName(form.hfFiles) ?? 'the picked folder', ...(rank !== null && { lora: { rank } }) } }),
      },
      world: worldRef,
      worldMaxTokens: n.worldMaxTokens!,
      ...(hf && { folder: { ...withName(folderName(form.hfFiles)), files: [...form.hfFiles], memoryGiB } }),
    },
  };
}

/**
 * What a held-out evaluation's success is read from: the greedy episodes, or the episodes with
 * actions sampled at the rollout temperature (the distribution GSPO trains; docs/method.md §13).
 */
export type SuccessMeasure = 'greedy' | 'sampled';

/** An evaluation's success (%) by `measure`; null for a sampled one stored before evaluations had it. */
export function evalPercent(e: AgentEval, measure: SuccessMeasure): number | null {
  if (measure === 'greedy') return 100 * e.success;
  return e.sampledSuccesses === undefined ? null : (100 * e.sampledSuccesses) / e.n;
}

/** One chart line per arm: held-out success (%) by RL step; the imitation arm a flat line across the RL steps. */
export function armCurves(v: ExperimentView, measure: SuccessMeasure = 'greedy'): { arm: AgentArm; points: [number, number][] }[] {
  const rl = v.spec.train.rlSteps;
  return v.arms.map((rec) => {
    const points = rec.evals.flatMap((e) => {
      const y = evalPercent(e, measure);
      return y === null ? [] : [[e.step, y] as [number, number]];
    });
    if (rec.arm === 'imitation' && points.length) return { arm: rec.arm, points: [points[0], [rl, points[0][1]]] };
    return { arm: rec.arm, points };
  });
}

/** The x range of the chart: model-real goes on from rlSteps to 2·rlSteps. */
export function curvesXMax(v: ExperimentView): number {
  const rl = v.spec.train.rlSteps;
  return v.spec.arms.includes('model-real') ? 2 * rl : rl;
}

/** Each arm's final success, its p against the untrained and the imitation policy (`evalP`), and its sim-to-real gap. */
export function armResults(v: ExperimentView): AgentArmResult[] {
  return experimentResults({ ...v, imitation: null, modelFinal: null, cursor: null });
}

/** A p-value for a table: three significant digits, small ones as powers of ten. */
export function formatP(p: number | null): string {
  if (p === null) return '—';
  if (p < 0.001) return p.toExponential(1);
  return p.toFixed(3);
}

/** What the experiment is doing, in words, from its stored state. */
export function experimentStage(v: ExperimentView): string {
  if (v.done) return 'finished';
  if (!v.untrained) return 'evaluating the untrained agent';
  if (!v.imitationEval) return `imitation (${v.spec.train.sftSteps} SFT steps)`;
  const a = v.arms.find((r) => !r.done);
  if (!a) return 'finishing';
  const step = v.cursor && v.arms[v.cursor.arm] === a ? v.cursor.step : 0;
  return `${a.arm}: ${step} of ${v.spec.train.rlSteps} RL steps stored`;
}
