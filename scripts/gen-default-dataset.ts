// Writes the default dataset the app and the CLI use when the user has loaded nothing:
// DEFAULT_PER_DOMAIN trajectories per domain from a fixed seed, as native JSONL, and prints the
// mask-category table per domain (docs/method.md §4) so a lopsided domain is seen before it ships.
// Run: npx tsx scripts/gen-default-dataset.ts
import { writeFileSync } from 'node:fs';
import { DOMAINS, type Trajectory } from '../src/core/schema/types.ts';
import { generateTrajectories, toJsonl } from '../src/envs/index.ts';
import { MASK_CATEGORIES, maskStats } from '../src/core/masking/index.ts';

export const DEFAULT_SEED = 20240501;
export const DEFAULT_PER_DOMAIN = 200; // the issue asks for about 200 per domain; about 6.5 MB, a sub-second load
const OUT = new URL('../public/default-dataset.jsonl', import.meta.url);

const all: Trajectory[] = DOMAINS.flatMap((d) => generateTrajectories(d, DEFAULT_PER_DOMAIN, DEFAULT_SEED));
const text = toJsonl(all);
writeFileSync(OUT, text);
const turns = all.reduce((s, t) => s + t.turns.length, 0);
console.log(`wrote ${all.length} trajectories, ${turns} turns, ${(new TextEncoder().encode(text).length / 1e6).toFixed(2)} MB to public/default-dataset.jsonl`);

const stats = maskStats(all);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(7);
console.log(`\n${'domain'.padEnd(10)}${'turns'.padStart(7)}${MASK_CATEGORIES.map((c) => c.padStart(12)).join('')}`);
for (const d of [...DOMAINS, 'overall']) {
  const c = d === 'overall' ? stats.overall : stats.perDomain[d];
  console.log(`${d.padEnd(10)}${String(c.total).padStart(7)}${MASK_CATEGORIES.map((k) => pct(c.shares[k]).padStart(12)).join('')}`);
}
