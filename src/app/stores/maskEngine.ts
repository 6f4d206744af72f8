// Live mask categories for the viewer. The data core's categorizeDataset recomputes word sets
// for every turn on each call (about half a second on the default dataset), too slow to follow
// a slider. Word-set metrics do not depend on the configuration, and recurrence depends only on
// the two boilerplate settings, so this adapter computes both once and re-runs only the core's
// per-turn rule (turnMask: category, ratio, override) when a threshold or ratio changes. It
// returns the core's own TrajectoryMask shape, so maskStats and the exporters see the same thing
// as categorizeDataset (maskEngine.test.ts checks that they agree).
import type { Trajectory } from '../../core/schema/types.ts';
import {
  observationRecurrence,
  recurrenceTable,
  turnFeatures,
  turnMask,
  type MaskConfig,
  type TrajectoryMask,
  type TurnFeatures,
} from '../../core/masking/index.ts';

type BaseFeatures = Omit<TurnFeatures, 'recurrence'>;

export interface DatasetFeatures {
  trajectories: Trajectory[];
  /** Per trajectory, per turn: the configuration-free metrics. */
  base: BaseFeatures[][];
  /** Cached recurrence per turn for one (boilerplateMaxChars, boilerplateMinRecurrence) pair. */
  recurrence?: { key: string; values: number[][] };
}

/** Computes word-set metrics in slices, yielding to the event loop so the page stays responsive. */
export async function computeFeatures(
  trajectories: Trajectory[],
  onProgress?: (done: number, total: number) => void,
  signal?: AbortSignal,
): Promise<DatasetFeatures> {
  const base: BaseFeatures[][] = new Array(trajectories.length);
  const slice = 100;
  for (let i = 0; i < trajectories.length; i += slice) {
    if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
    for (let j = i; j < Math.min(i + slice, trajectories.length); j++) {
      base[j] = trajectories[j].turns.map((turn) => {
        const { recurrence: _unused, ...f } = turnFeatures(turn.action, turn.observation, 1);
        return f;
      });
    }
    onProgress?.(Math.min(i + slice, trajectories.length), trajectories.length);
    await new Promise((r) => setTimeout(r, 0));
  }
  return { trajectories, base };
}

function recurrenceFor(f: DatasetFeatures, config: MaskConfig): number[][] {
  const key = `${config.boilerplateMaxChars}|${config.boilerplateMinRecurrence}`;
  if (f.recurrence?.key === key) return f.recurrence.values;
  const table = recurrenceTable(f.trajectories, config);
  const values = f.trajectories.map((t) => t.turns.map((turn) => observationRecurrence(turn.observation, table, config)));
  f.recurrence = { key, values };
  return values;
}

/** Categories and weights for every turn under `config`, as categorizeDataset would give them. */
export function categorize(f: DatasetFeatures, config: MaskConfig): TrajectoryMask[] {
  const rec = recurrenceFor(f, config);
  return f.trajectories.map((t, ti) => ({
    id: t.id,
    domain: t.domain,
    turns: t.turns.map((turn, i) => turnMask({ ...f.base[ti][i], recurrence: rec[ti][i] }, turn.metadata?.loss_weight_override, config)),
  }));
}
