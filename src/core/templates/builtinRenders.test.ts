// The built-in templates are texts now; they must render exactly what the JSON templates
// (preamble + headed sections) rendered. fixtures/builtin-renders.json holds digests of what the
// JSON renderer produced on turn samples from every built-in domain and some awkward ones
// (scripts/fixtures/template-renders.ts wrote it before templates became text).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Trajectory } from '../schema/types.ts';
import { turnSample } from '../turns/index.ts';
import { BUILTIN_TEMPLATES, checkTemplate, renderChat, renderProblems, renderSample, renderSystem, renderTrajectory } from './index.ts';

const fixture = JSON.parse(readFileSync(new URL('./fixtures/builtin-renders.json', import.meta.url), 'utf8')) as {
  trajectories: Trajectory[];
  renders: Record<string, Record<string, string>>;
};
const digest = (v: unknown) =>
  createHash('sha256')
    .update(typeof v === 'string' ? v : JSON.stringify(v))
    .digest('hex')
    .slice(0, 32);

describe('built-in text templates render byte for byte what the JSON templates rendered', () => {
  it('covers every built-in domain and template', () => {
    expect(new Set(fixture.trajectories.map((t) => t.domain))).toEqual(new Set(['mcp', 'search', 'terminal', 'swe', 'android', 'web', 'os', '']));
    expect(Object.keys(fixture.renders)).toEqual(Object.keys(BUILTIN_TEMPLATES));
  });
  for (const [name, t] of Object.entries(BUILTIN_TEMPLATES)) {
    it(name, () => {
      const want = fixture.renders[name];
      let checked = 0;
      for (const traj of fixture.trajectories) {
        expect(digest(renderTrajectory(t, traj)), `${traj.id}/trajectory: ${JSON.stringify(renderTrajectory(t, traj))}`).toBe(want[`${traj.id}/trajectory`]);
        traj.turns.forEach((_, i) => {
          const s = turnSample(traj, i);
          const plain = renderSample(t, s);
          expect(
            digest([plain.text, plain.promptEnd, plain.targetStart, plain.targetEnd, plain.segments]),
            `${traj.id}/${i}/sample: ${JSON.stringify(plain.text)}`,
          ).toBe(want[`${traj.id}/${i}/sample`]);
          expect(digest(renderSample(t, s, { reasoning: 'think {{action}}' }))).toBe(want[`${traj.id}/${i}/reasoning`]);
          expect(digest(renderSystem(t, s)), `${traj.id}/${i}/system: ${JSON.stringify(renderSystem(t, s))}`).toBe(want[`${traj.id}/${i}/system`]);
          expect(digest(renderChat(t, s))).toBe(want[`${traj.id}/${i}/chat`]);
          checked += 4;
        });
      }
      expect(checked).toBe(Object.keys(want).length - fixture.trajectories.length);
      // The layout the fitter cuts is what the Jinja engine renders.
      expect(checkTemplate(t)).toEqual([]);
      expect(
        renderProblems(
          t,
          fixture.trajectories.flatMap((traj) => traj.turns.map((_, i) => turnSample(traj, i))),
        ),
      ).toEqual([]);
    });
  }
});
