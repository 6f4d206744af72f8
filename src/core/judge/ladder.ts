// The judge ladder (docs/method.md §8: "a judge is only useful if it ranks"): for held-out turns, six
// predictions of falling quality — the reference, the reference with one token of its
// deterministic region changed, the previous observation, a fixed plausible string of the
// domain, random text of the reference's length, an empty answer — and the mean score a judge
// gives each, per domain. A judge that ranks what it judges scores them strictly in that order.
import type { KnownDomain, SpanLabel, Trajectory } from '../schema/types.ts';
import { BUILTIN_TEMPLATES, renderSystem } from '../templates/index.ts';
import { expandTurns, hashString, seededRandom, splitByTrajectory, type SplitOptions, type TurnSample } from '../turns/index.ts';
import { judgeInputFor } from './sample.ts';
import { DIMENSIONS, type JudgeInput, type Scores, type ScoredVerdict } from './types.ts';

export const RUNGS = ['reference', 'one_token', 'previous', 'fixed', 'random', 'empty'] as const;
export type Rung = (typeof RUNGS)[number];

/** What each rung is, for tables and docs. */
export const RUNG_LABELS: Record<Rung, string> = {
  reference: 'the reference',
  one_token: 'one deterministic token changed',
  previous: 'the previous observation',
  fixed: 'a fixed plausible string',
  random: 'random text, reference length',
  empty: 'an empty answer',
};

/**
 * One plausible observation per domain, in the format of that domain's environment but tied to
 * no turn and never printed verbatim by it (another host, store, app or test suite): what a
 * model that ignores its input would print every time.
 */
export const FIXED_STRINGS: Record<KnownDomain, string> = {
  terminal:
    'total 12\ndrwxr-xr-x 3 user user 4096 Mar  3 09:14 .\n-rw-r--r-- 1 user user  812 Mar  3 09:14 config.yaml\n-rw-r--r-- 1 user user 2301 Mar  3 09:12 main.py\nuser@workstation:~/project$',
  mcp: '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\\"ok\\":true,\\"id\\":1,\\"message\\":\\"Done\\"}"}]}}',
  search:
    'Results 1-3 of about 40 for "history":\n1. History\n   https://wiki.example/History\n   History is the study of past events.\n2. Historian\n   https://wiki.example/Historian\n   A historian writes about the past.\n3. Museum of History\n   https://wiki.example/Museum_of_History\n   The Museum of History is a museum in the capital.',
  swe: 'running 4 tests\ntest parse handles empty input ... ok\ntest sum of a list ... ok\ntest trims whitespace ... ok\ntest upper case ... ok\n\ntest result: ok. 4 passed; 0 failed; finished in 12ms',
  web: '[1] RootWebArea "Home | Example Store"\n  [2] banner\n    [3] link "Example Store"\n    [4] searchbox "Search" value=""\n    [5] button "Search"\n  [6] main\n    [7] heading "Welcome"\n    [8] link "Products"\n    [9] link "About us"',
  android:
    '[1] FrameLayout "Camera"\n  [2] LinearLayout "status_bar"\n    [3] TextView "12:00"\n    [4] TextView "Wi-Fi · 80%"\n  [5] ImageButton "Shutter"\n  [6] ImageButton "Switch camera"\n  [7] TextView "Photo"',
  os: '[1] desktop "Desktop"\n  [2] window "Text Editor - untitled" (focused)\n    [3] textbox "Document" value=""\n    [4] button "Save"\n  [5] panel "Taskbar"\n    [6] button "Files"\n    [7] button "Terminal"\n    [8] label "12:00"',
};

/** A deterministic generator for one turn and one purpose. */
function rngFor(sample: TurnSample, purpose: string): () => number {
  return seededRandom(hashString(`${purpose}:${sample.trajectoryId}:${sample.turnIndex}`));
}

/**
 * The reference with one alphanumeric token inside a deterministic span changed by one
 * character (a digit moves by one, a letter to the next letter), or null when no deterministic
 * span holds such a token. The smallest change the rule verifier must still catch.
 */
export function oneTokenChange(reference: string, spans: readonly SpanLabel[] | undefined, rand: () => number): string | null {
  const tokens: { start: number; end: number }[] = [];
  for (const s of spans ?? []) {
    if (s.kind !== 'deterministic') continue;
    const part = reference.slice(s.start, s.end);
    for (const m of part.matchAll(/[A-Za-z0-9]+/g)) tokens.push({ start: s.start + m.index, end: s.start + m.index + m[0].length });
  }
  if (tokens.length === 0) return null;
  const t = tokens[Math.floor(rand() * tokens.length)];
  const at = t.start + Math.floor(rand() * (t.end - t.start));
  const c = reference[at];
  const next = /\d/.test(c) ? String((Number(c) + 1) % 10) : c === 'z' ? 'a' : c === 'Z' ? 'A' : String.fromCharCode(c.charCodeAt(0) + 1);
  return reference.slice(0, at) + next + reference.slice(at + 1);
}

const RANDOM_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789      .,:-_/"()[]';

/**
 * Random characters in place of every character of the reference except its line breaks: the
 * reference's length and line layout without its content, the cheapest shape copy.
 */
export function randomText(reference: string, rand: () => number): string {
  let out = '';
  for (const c of reference) out += c === '\n' ? '\n' : RANDOM_CHARS[Math.floor(rand() * RANDOM_CHARS.length)];
  return out;
}

/** The six predictions for one turn, or null when the turn has no deterministic token to change. */
export function ladderPredictions(sample: TurnSample): Record<Rung, string> | null {
  const oneToken = oneTokenChange(sample.targetObservation, sample.targetSpans, rngFor(sample, 'one-token'));
  if (oneToken === null) return null;
  const previous = sample.turnIndex > 0 ? sample.history[sample.turnIndex - 1].observation : sample.systemPrompt.initial_state;
  const fixed = FIXED_STRINGS[sample.domain as KnownDomain];
  if (fixed === undefined) throw new Error(`no fixed plausible string for domain '${sample.domain}'`);
  return {
    reference: sample.targetObservation,
    one_token: oneToken,
    previous,
    fixed,
    random: randomText(sample.targetObservation, rngFor(sample, 'random')),
    empty: '',
  };
}

export interface LadderRow {
  domain: string;
  /** Turns judged (each at every rung). */
  turns: number;
  /** Turns left out because their reference has no deterministic token. */
  skipped: number;
  /** Mean 1–5 total per rung. */
  mean: Record<Rung, number>;
  /** Mean 1–5 score of each dimension per rung. */
  dims: Record<Rung, Scores>;
}

/** The AgentWorldBench scale: (mean − 1) / 4 × 100. */
export function toPercent(mean: number): number {
  return ((mean - 1) / 4) * 100;
}

function emptyRow(domain: string): LadderRow {
  const zeros = () => Object.fromEntries(DIMENSIONS.map((d) => [d, 0])) as Scores;
  return {
    domain,
    turns: 0,
    skipped: 0,
    mean: Object.fromEntries(RUNGS.map((r) => [r, 0])) as Record<Rung, number>,
    dims: Object.fromEntries(RUNGS.map((r) => [r, zeros()])) as Record<Rung, Scores>,
  };
}

/** Judges every rung of every sample with `judge` and averages per domain, in order of first appearance. */
export function runLadder(
  samples: readonly TurnSample[],
  inputFor: (s: TurnSample, prediction: string) => JudgeInput,
  judge: (input: JudgeInput) => ScoredVerdict,
): LadderRow[] {
  const rows = new Map<string, LadderRow>();
  for (const s of samples) {
    const row = rows.get(s.domain) ?? emptyRow(s.domain);
    rows.set(s.domain, row);
    const preds = ladderPredictions(s);
    if (!preds) {
      row.skipped++;
      continue;
    }
    row.turns++;
    for (const r of RUNGS) {
      const v = judge(inputFor(s, preds[r]));
      row.mean[r] += v.total;
      for (const d of DIMENSIONS) row.dims[r][d] += v.scores[d];
    }
  }
  for (const row of rows.values()) {
    for (const r of RUNGS) {
      row.mean[r] /= Math.max(1, row.turns);
      for (const d of DIMENSIONS) row.dims[r][d] /= Math.max(1, row.turns);
    }
  }
  return [...rows.values()];
}

/** Why a row breaks the ladder's rules, or an empty list when it holds. */
export function ladderViolations(row: LadderRow, maxLow = 25): string[] {
  const out: string[] = [];
  for (let i = 1; i < RUNGS.length; i++) {
    const [a, b] = [RUNGS[i - 1], RUNGS[i]];
    if (!(row.mean[a] > row.mean[b]))
      out.push(`${row.domain}: ${a} (${toPercent(row.mean[a]).toFixed(1)}) is not above ${b} (${toPercent(row.mean[b]).toFixed(1)})`);
  }
  for (const r of ['fixed', 'random'] as const) {
    if (!(toPercent(row.mean[r]) < maxLow)) out.push(`${row.domain}: ${r} scores ${toPercent(row.mean[r]).toFixed(1)}, not under ${maxLow}`);
  }
  return out;
}

/** The held-out turns the ladder judges: every turn of the eval split (docs/method.md §3) of `trajectories`. */
export function ladderSamples(trajectories: Trajectory[], options: SplitOptions = {}): TurnSample[] {
  return expandTurns(splitByTrajectory(trajectories, options).eval);
}

/** The judge's view of one ladder prediction: the sample with the eval template's system text as context. */
export function ladderInput(sample: TurnSample, prediction: string): JudgeInput {
  return judgeInputFor(sample, renderSystem(BUILTIN_TEMPLATES.v0, sample), prediction);
}
