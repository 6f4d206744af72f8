// Shared by the prototype-key tests (core and CLI): data whose domains and ids are
// Object.prototype's own keys, and a guard that fails a test which writes onto Object.prototype.
import { afterEach, beforeEach, expect } from 'vitest';
import { emptySystemPrompt, type Trajectory } from './schema/types.ts';

export const NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];

/** Each name as a trajectory id and domain; the i-th has i + 1 turns. */
export function dataset(): Trajectory[] {
  return NAMES.map((name, i) => ({
    id: name,
    domain: name,
    system_prompt: { ...emptySystemPrompt(), task_description: `task ${name}` },
    turns: Array.from({ length: i + 1 }, (_, k) => ({ action: `ls dir${k}`, observation: `file${k}.txt\nother${k}` })),
  }));
}
export const turnsOf = (name: string) => NAMES.indexOf(name) + 1;
export const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** After every test of the file: Object.prototype has the same own keys, and a fresh {} reads nothing extra. */
export function guardObjectPrototype(): void {
  const protoNames = () => Object.getOwnPropertyNames(Object.prototype).sort();
  let before: string[];
  beforeEach(() => {
    before = protoNames();
  });
  afterEach(() => {
    expect(protoNames()).toEqual(before);
    const probe = {} as Record<string, unknown>;
    for (const k of ['trajectories', 'samples', 'train', 'eval', 'total', 'counts']) expect(probe[k]).toBeUndefined();
    expect(Object.getPrototypeOf(probe)).toBe(Object.prototype);
  });
}
