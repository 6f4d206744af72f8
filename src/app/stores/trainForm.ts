// The Train view's form as typed, kept in localStorage so a reload keeps the settings. Its
// checks and the job spec it becomes are in views/train/form.ts.
import { create } from 'zustand';
import { persist } from 'zustand/middleware';
import type { PresetName } from '../../core/model/config.ts';
import type { Stage } from '../../core/trainSpec.ts';
import type { RewardKind } from '../../core/judge/reward.ts';
import type { KnownDomain } from '../../core/schema/types.ts';

/** Text as typed (numbers stay strings until checked, so a bad value can be shown and fixed). */
export interface TrainForm {
  /** The quick recipe (one click: its data is generated, its settings fixed), or a run set up field by field. */
  mode: 'recipe' | 'custom';
  /** The built-in domain the recipe generates and trains on. */
  recipeDomain: KnownDomain;
  /**
   * Task play added to the recipe's data (a world model for Sim RL, docs/method.md §13): '' for
   * none, 'probed' for every task family of the domain with a probe, or one family's name.
   */
  recipeTasks: string;
  name: string;
  datasetId: string;
  /** '' for every domain of the dataset. */
  domain: string;
  stage: Stage;
  preset: PresetName;
  /** '' to start fresh; HF_START for a Hugging Face folder; else `${runId}|${tag}` of a stored checkpoint. */
  from: string;
  /** A Hugging Face folder: every weight trains, or a LoRA adapter of this rank and alpha (blank: 2 × rank). */
  tuning: 'full' | 'lora';
  loraRank: string;
  loraAlpha: string;
  /** GPU memory a folder's run may take, in GiB (WebGPU does not report the device's). */
  memoryGiB: string;
  steps: string;
  batch: string;
  tokens: string;
  lr: string;
  evalEvery: string;
  judgeSamples: string;
  groupSize: string;
  promptsPerStep: string;
  maxNewTokens: string;
  /** RL rollout sampling temperature. */
  temperature: string;
  seed: string;
  /** RL: the reward of the method's ablation, and who judges it. */
  reward: RewardKind;
  rewardJudge: 'local' | 'endpoint';
  judgeBaseUrl: string;
  judgeModel: string;
  /** Sent with the job, never stored (not in the run, not in localStorage). */
  judgeApiKey: string;
  /** RL: held-out turns judged at each evaluation. */
  evalSamples: string;
  /** SFT: the reference observations, or labels chosen by rejection sampling. */
  labels: 'reference' | 'rejection';
  teacher: 'local' | 'endpoint';
  teacherBaseUrl: string;
  teacherModel: string;
  teacherApiKey: string;
  labelCandidates: string;
  labelThreshold: string;
  labelSamples: string;
}

/** The form's `from` when the run starts from a Hugging Face folder. */
export const HF_START = 'hf';

/** Fields never persisted (API keys). */
export const SECRET_FIELDS = ['judgeApiKey', 'teacherApiKey'] as const;

/**
 * A first run is the quick recipe on the terminal domain (src/train/recipe.ts): it learns
 * something. The custom fields start at the mini preset, whose context holds the initial state and the newest turn of the
 * default dataset's rows (a model that cannot see the state cannot simulate it; micro, for
 * CPU-emulated GPUs, sees only their start). Tokens empty: the preset's whole context.
 */
export const DEFAULT_FORM: TrainForm = {
  mode: 'recipe',
  recipeDomain: 'terminal',
  recipeTasks: '',
  name: '',
  datasetId: '',
  domain: '',
  stage: 'sft',
  preset: 'mini',
  from: '',
  tuning: 'lora',
  loraRank: '8',
  loraAlpha: '',
  memoryGiB: '4',
  steps: '40',
  batch: '4',
  tokens: '',
  lr: '',
  evalEvery: '10',
  judgeSamples: '0',
  groupSize: '4',
  promptsPerStep: '2',
  maxNewTokens: '16',
  temperature: '1',
  seed: '0',
  reward: 'rubric',
  rewardJudge: 'local',
  judgeBaseUrl: '',
  judgeModel: '',
  judgeApiKey: '',
  evalSamples: '4',
  labels: 'reference',
  teacher: 'local',
  teacherBaseUrl: '',
  teacherModel: '',
  teacherApiKey: '',
  labelCandidates: '4',
  labelThreshold: '4',
  labelSamples: '32',
};

interface TrainFormState {
  form: TrainForm;
  set(patch: Partial<TrainForm>): void;
  reset(): void;
}

export const useTrainFormStore = create<TrainFormState>()(
  persist(
    (set) => ({
      form: DEFAULT_FORM,
      set: (patch) => set((s) => ({ form: { ...s.form, ...patch } })),
      reset: () => set({ form: DEFAULT_FORM }),
    }),
    {
      name: 'lwm.trainForm',
      version: 1,
      // API keys stay in memory only.
      partialize: (s) => ({ form: { ...s.form, ...Object.fromEntries(SECRET_FIELDS.map((k) => [k, ''])) } }),
      merge: (persisted, current) => ({ ...current, form: { ...DEFAULT_FORM, ...(persisted as Partial<TrainFormState>)?.form } }),
    },
  ),
);
