// Small helpers the task families share.
import { PlanAgent, type Agent, type PlanStep } from '../agent.ts';
import type { TaskParams, Verdict } from './types.ts';

export const pass = (reason: string): Verdict => ({ success: true, reason });
export const fail = (reason: string): Verdict => ({ success: false, reason });

/** An agent that plays these steps in order. */
export const plan = (...steps: PlanStep[]): Agent => new PlanAgent(steps);

/** A parameter as a string ('' when missing: a check then fails, it never throws). */
export const str = (p: TaskParams, key: string): string => {
  const v = p[key];
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
};

/** Lower case, single spaces, no surrounding quotes or final full stop: how answers are compared. */
export function normalizeAnswer(s: string): string {
  return s
    .replace(/^[\s"'`]+|[\s"'`.!]+$/g, '')
    .replace(/\s+/g, ' ')
    .toLowerCase();
}

/** Replaces the environment's own goal in its task description; a layout that changed is an error. */
export function replaceGoal(description: string, pattern: RegExp, goal: string): string {
  if (!pattern.test(description)) throw new Error(`task description has no goal to replace (${pattern}): ${description.slice(0, 80)}`);
  return description.replace(pattern, goal);
}

/** Words for goals: short, lower case, distinct, none a shell keyword or a command name. */
export const WORDS: readonly string[] = (
  'amber basil cobalt delta ember fjord garnet harbor indigo jasper kettle lantern maple nectar orbit pepper quartz raven ' +
  'saffron tundra umber velvet walnut xenon yonder zephyr acorn breeze cinder dune falcon glacier hazel iris juniper koala ' +
  'lagoon meadow nimbus otter'
).split(' ');
