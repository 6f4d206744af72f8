// The four per-turn metrics of docs/method.md §4 on word sets (words.ts), and the recurrence key that
// boilerplate counts across a dataset.
import { codePointLength, wordSet } from './words.ts';

export interface TurnMetrics {
  /** |A∩O| / |A|: how much of the action the observation echoes. 0 when the action has no words. */
  ol: number;
  /** |O\A| / |O|: share of new words in the observation. 0 when the observation has no words. */
  nov: number;
  /** |A∩O| / |A∪O|. 0 when both have no words. */
  jac: number;
  /** Observation length / action length in code points; an empty action counts as length 1. */
  r: number;
}

export interface TurnFeatures extends TurnMetrics {
  obsWords: number;
  /** How many different actions in the dataset were answered by this (normalised) observation. */
  recurrence: number;
  /** The observation has no words at all (empty, whitespace, or only punctuation). */
  empty: boolean;
}

function metricsOfSets(a: Set<string>, o: Set<string>, actLen: number, obsLen: number): TurnMetrics {
  let inter = 0;
  for (const w of a) if (o.has(w)) inter++;
  const union = a.size + o.size - inter;
  return {
    ol: a.size ? inter / a.size : 0,
    nov: o.size ? (o.size - inter) / o.size : 0,
    jac: union ? inter / union : 0,
    r: obsLen / Math.max(actLen, 1),
  };
}

export function turnMetrics(action: string, observation: string): TurnMetrics {
  return metricsOfSets(wordSet(action), wordSet(observation), codePointLength(action), codePointLength(observation));
}

export function turnFeatures(action: string, observation: string, recurrence: number): TurnFeatures {
  const a = wordSet(action);
  const o = wordSet(observation);
  return { ...metricsOfSets(a, o, codePointLength(action), codePointLength(observation)), obsWords: o.size, recurrence, empty: o.size === 0 };
}

/** The key under which recurring observations are counted. */
export function normalizeForRecurrence(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').replace(/\d+/g, '0').trim();
}
