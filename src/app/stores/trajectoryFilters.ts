// The Trajectories list's search and filters. Kept for the session (sessionStorage), so going
// to another view and back, or reloading, finds the list as it was left.
import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';
import type { MaskCategory } from '../../core/masking/index.ts';

export interface TrajectoryFilters {
  query: string;
  domain: string;
  category: MaskCategory | '';
  minTurns: string;
  maxTurns: string;
}

interface FilterState extends TrajectoryFilters {
  set(change: Partial<TrajectoryFilters>): void;
  clear(): void;
}

const EMPTY: TrajectoryFilters = { query: '', domain: '', category: '', minTurns: '', maxTurns: '' };

export const useTrajectoryFilters = create<FilterState>()(
  persist(
    (set) => ({
      ...EMPTY,
      set: (change) => set(change),
      clear: () => set(EMPTY),
    }),
    { name: 'lwm.trajectory-filters', version: 1, storage: createJSONStorage(() => sessionStorage) },
  ),
);

/** A turn-count bound: a whole number ≥ 0, or empty for none. */
export function parseBound(text: string, name: string): { value: number | null; error: string | null } {
  if (text.trim() === '') return { value: null, error: null };
  const v = Number(text);
  if (!Number.isInteger(v) || v < 0) return { value: null, error: `${name} must be a whole number ≥ 0, got "${text}"` };
  return { value: v, error: null };
}
