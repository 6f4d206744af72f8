// Test helpers for the optimization loop: judged records with chosen scores, and a fake simulator
// + judge whose scores depend on the template's instructions (so optimizers have something to find).
import type { AwbJudgedRecord } from '../bench/records.ts';
import { DIMENSIONS, type Dimension } from '../judge/types.ts';
import { keyedUniform } from '../random.ts';

export function judged(i: number, scores: Partial<Record<Dimension, number>>, extra: Partial<AwbJudgedRecord> = {}): AwbJudgedRecord {
  const full = Object.fromEntries(DIMENSIONS.map((d) => [d, scores[d] ?? 4])) as Record<Dimension, number>;
  const total = DIMENSIONS.reduce((a, d) => a + full[d], 0) / DIMENSIONS.length;
  return {
    task: i % 2 ? 'terminal' : 'mcp',
    id: `s${i}`,
    prompt: [`### Turn 1\n**Action:**\nls ${i}`],
    response: [`**Environment Observation:**\nfile${i}.txt`],
    current_prompt: `### Turn 1\n**Action:**\nls ${i}`,
    system_str: 'sys',
    turn_idx: 1,
    total_turns: 1,
    gen: `<predicted_observation>out ${i}</predicted_observation>`,
    ...full,
    total_score: total,
    failed: false,
    strengths: [],
    weaknesses: [],
    ...extra,
  };
}

/**
 * A fake evaluation: each sample's factuality is 2, plus 2 when the template holds an instruction
 * mentioning "invent"; consistency is 3, plus 1 with "state change"; everything else 4; a small
 * per-(sample, template) jitter keeps differences from being exactly constant.
 */
export function fakeEvaluate(n: number, split: 'dev' | 'test'): (text: string) => AwbJudgedRecord[] {
  return (text: string) =>
    Array.from({ length: n }, (_, i) => {
      const jitter = keyedUniform(`${split}:${i}:${text}`, 1) < 0.5 ? 0 : 1;
      const factuality = Math.min(5, 2 + (text.includes('invent') ? 2 : 0) + (i % 3 === 0 ? jitter : 0));
      const consistency = Math.min(5, 3 + (text.includes('state change') ? 1 : 0));
      const weaknesses = factuality < 4 ? ['Invents a file that does not exist'] : consistency < 4 ? ['Forgot the state from an earlier turn'] : [];
      return judged(i + (split === 'test' ? 1000 : 0), { factuality, consistency }, { weaknesses });
    });
}
