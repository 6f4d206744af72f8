// A fake wall clock: starts at a seed-derived instant and advances a few seconds per step, so
// timestamps look real yet are byte-identical for the same seed.
import type { Rng } from '../core/random.ts';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export class FakeClock {
  /** Milliseconds since the epoch (UTC). */
  ms: number;
  constructor(rng: Rng) {
    // Some time in 2024, on a whole second.
    this.ms = Date.UTC(2024, 0, 1) + rng.int(0, 360 * 86400) * 1000;
  }
  tick(rng: Rng, minS = 1, maxS = 20): void {
    this.ms += rng.int(minS, maxS) * 1000;
  }
  iso(ms = this.ms): string {
    return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** `ls -l` style date: "Mar  4 09:12". */
export function lsDate(ms: number): string {
  const d = new Date(ms);
  return `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`;
}

/** "09:12" */
export function hhmm(ms: number): string {
  const d = new Date(ms);
  return `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`;
}
