// Scripted agents: what drives the environments when generating trajectories. A goal-directed
// agent follows a plan for the episode's task (with the occasional realistic slip: a typo, a
// wrong path, a missing argument) and a random agent pokes around. Both are seeded.
import type { Rng } from '../core/random.ts';
import type { StepResult } from './types.ts';

export type AgentKind = 'goal' | 'random';

export interface Agent {
  /** The next action given the last step's result, or null when the agent is done. */
  next(last: StepResult | null): string | null;
}

/** A step of a plan: a literal action, or one computed from the environment's state when due. */
export type PlanStep = string | (() => string | null);

/** Plays a list of steps in order; a step that yields null is skipped. */
export class PlanAgent implements Agent {
  private i = 0;
  constructor(private readonly steps: PlanStep[]) {}
  next(): string | null {
    while (this.i < this.steps.length) {
      const s = this.steps[this.i++];
      const a = typeof s === 'string' ? s : s();
      if (a !== null) return a;
    }
    return null;
  }
}

/** Calls `gen` for `count` actions; used by random agents. */
export class RandomAgent implements Agent {
  private n = 0;
  constructor(
    private readonly count: number,
    private readonly gen: () => string,
  ) {}
  next(): string | null {
    return this.n++ < this.count ? this.gen() : null;
  }
}

/** A typo a person would make: a swapped, dropped or doubled letter. */
export function typo(rng: Rng, word: string): string {
  if (word.length < 3) return word + word[word.length - 1];
  const i = rng.int(0, word.length - 2);
  switch (rng.int(0, 2)) {
    case 0:
      return word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
    case 1:
      return word.slice(0, i) + word.slice(i + 1);
    default:
      return word.slice(0, i) + word[i] + word.slice(i);
  }
}
