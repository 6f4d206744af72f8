// Mask settings (every threshold and ratio of the data core's MaskConfig) and the live
// categories of the active dataset. Settings persist in localStorage; the features behind the
// categories are recomputed per loaded dataset.
import { useEffect, useMemo } from 'react';
import { create } from 'zustand';
import { persist } from 'zustand/middleware';
import type { Trajectory } from '../../core/schema/types.ts';
import { checkMaskConfig, DEFAULT_MASK_CONFIG, maskStats, type MaskConfig, type MaskStats, type TrajectoryMask } from '../../core/masking/index.ts';
import { categorize, computeFeatures, type DatasetFeatures } from './maskEngine.ts';

export function defaultMaskConfig(): MaskConfig {
  return { ...DEFAULT_MASK_CONFIG, ratios: { ...DEFAULT_MASK_CONFIG.ratios } };
}

interface MaskSettingsState {
  config: MaskConfig;
  /** Applies a change only when the whole configuration stays valid; returns the problems otherwise. */
  update(change: (c: MaskConfig) => MaskConfig): string[];
  reset(): void;
}

export const useMaskSettings = create<MaskSettingsState>()(
  persist(
    (set, get) => ({
      config: defaultMaskConfig(),
      update(change) {
        const next = change(structuredClone(get().config));
        const errors = checkMaskConfig(next);
        if (!errors.length) set({ config: next });
        return errors;
      },
      reset() {
        set({ config: defaultMaskConfig() });
      },
    }),
    {
      name: 'lwm.mask-settings',
      version: 1,
      // A stored configuration from an older or tampered build is merged over the defaults and
      // dropped if it no longer validates, so a bad value in storage cannot break the viewer.
      merge(persisted, current) {
        const p = (persisted as Partial<MaskSettingsState> | undefined)?.config;
        if (!p) return current;
        // Only keys this build knows: a setting an earlier build had (echoMinOverlap) is dropped.
        const known = Object.fromEntries(Object.entries(p).filter(([k]) => Object.hasOwn(DEFAULT_MASK_CONFIG, k)));
        const merged: MaskConfig = { ...defaultMaskConfig(), ...known, ratios: { ...DEFAULT_MASK_CONFIG.ratios, ...p.ratios } };
        return checkMaskConfig(merged).length ? current : { ...current, config: merged };
      },
      partialize: (s) => ({ config: s.config }),
    },
  ),
);

interface FeatureState {
  /** The trajectories the features were computed for (identity of the active dataset's array). */
  source: Trajectory[] | null;
  features: DatasetFeatures | null;
  progress: { done: number; total: number } | null;
  ensure(trajectories: Trajectory[]): void;
}

let controller: AbortController | null = null;

export const useFeatureStore = create<FeatureState>()((set, get) => ({
  source: null,
  features: null,
  progress: null,
  ensure(trajectories) {
    if (get().source === trajectories) return;
    controller?.abort();
    const c = (controller = new AbortController());
    set({ source: trajectories, features: null, progress: { done: 0, total: trajectories.length } });
    computeFeatures(trajectories, (done, total) => !c.signal.aborted && set({ progress: { done, total } }), c.signal).then(
      (features) => {
        if (!c.signal.aborted) set({ features, progress: null });
      },
      () => {
        /* superseded by a newer dataset */
      },
    );
  },
}));

export interface MaskResult {
  masks: TrajectoryMask[];
  stats: MaskStats;
  /** Index of each trajectory id in the dataset. */
  byId: Map<string, number>;
}

/** Categories and statistics of `trajectories` under the current settings; null while features compute. */
export function useMaskResult(trajectories: Trajectory[]): MaskResult | null {
  const config = useMaskSettings((s) => s.config);
  const features = useFeatureStore((s) => (s.source === trajectories ? s.features : null));
  const ensure = useFeatureStore((s) => s.ensure);
  useEffect(() => ensure(trajectories), [ensure, trajectories]);
  return useMemo(() => {
    if (!features) return null;
    const masks = categorize(features, config);
    return { masks, stats: maskStats(trajectories, config, masks), byId: new Map(trajectories.map((t, i) => [t.id, i])) };
  }, [features, config, trajectories]);
}
