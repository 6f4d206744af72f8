import { describe, expect, it } from 'vitest';
import { coerceScore, parseVerdict, repairJson } from './parse.ts';

const ALL4 = { format: 4, factuality: 4, consistency: 4, realism: 4, quality: 4 };

// A corpus of judge replies of the kinds real endpoints send back.
const PARSEABLE: { name: string; reply: string; scores: Record<string, number>; via?: string }[] = [
  {
    name: 'tag with fenced json and prose around it',
    reply:
      'Let me think.\nFormat looks fine.\n<verdict>\n```json\n{"strengths": ["right columns"], "weaknesses": ["wrong PID"], "scores": {"format": 5, "factuality": 2, "consistency": 4, "realism": 4, "quality": 3}}\n```\n</verdict>\nHope this helps!',
    scores: { format: 5, factuality: 2, consistency: 4, realism: 4, quality: 3 },
    via: 'tag',
  },
  {
    name: 'AgentWorldBench final_evaluation tag',
    reply: '<final_evaluation>```json\n{"scores": {"format": 4, "factuality": 4, "consistency": 4, "realism": 4, "quality": 4}}\n```</final_evaluation>',
    scores: ALL4,
  },
  {
    name: 'fenced block without a tag, after a draft block',
    reply:
      'Draft:\n```json\n{"scores": {"format": 1, "factuality": 1, "consistency": 1, "realism": 1, "quality": 1}}\n```\nOn reflection:\n```json\n{"scores": {"format": 4, "factuality": 4, "consistency": 4, "realism": 4, "quality": 4}}\n```',
    scores: ALL4,
    via: 'fence',
  },
  {
    name: 'bare object in prose',
    reply: 'Overall the simulation is good. {"format": 4, "factuality": 4, "consistency": 4, "realism": 4, "quality": 4} That is my verdict.',
    scores: ALL4,
    via: 'braces',
  },
  {
    name: 'trailing commas',
    reply: '```json\n{"scores": {"format": 4, "factuality": 4, "consistency": 4, "realism": 4, "quality": 4,},}\n```',
    scores: ALL4,
    via: 'repaired',
  },
  {
    name: 'single quotes and Python literals',
    reply: "{'scores': {'format': 3, 'factuality': 2, 'consistency': 5, 'realism': 4, 'quality': 3}, 'hacking': False, 'weaknesses': ['says \"ok\" twice']}",
    scores: { format: 3, factuality: 2, consistency: 5, realism: 4, quality: 3 },
    via: 'repaired',
  },
  {
    name: 'bare keys and comments',
    reply: '{\n  // my scores\n  scores: { format: 5, factuality: 4, consistency: 4, realism: 5, quality: 4 }\n}',
    scores: { format: 5, factuality: 4, consistency: 4, realism: 5, quality: 4 },
    via: 'repaired',
  },
  {
    name: 'scores as strings and fractions',
    reply: '{"scores": {"format": "5", "factuality": "3/5", "consistency": "4 out of 5", "realism": 4/5, "quality": "2"}}',
    scores: { format: 5, factuality: 3, consistency: 4, realism: 4, quality: 2 },
  },
  {
    name: 'floats rounded half to even, 0 invalid, out-of-range clamped',
    reply: '{"format": 4.5, "factuality": 2.4, "consistency": 7, "realism": 0, "quality": -3}',
    scores: { format: 4, factuality: 2, consistency: 5, realism: 0, quality: 1 },
  },
  {
    name: 'capitalised keys and nested score objects',
    reply: '{"Scores": {"Format": {"score": 5, "why": "ok"}, "Factuality": {"score": 3}, "Consistency": 4, "Realism": 4, "Quality": 4}}',
    scores: { format: 5, factuality: 3, consistency: 4, realism: 4, quality: 4 },
  },
  {
    name: 'no JSON at all, only a markdown list',
    reply: 'My scores:\n- **Format**: 5\n- **Factuality**: 2/5\n- **Consistency**: 4\n- **Realism**: 4\n- **Quality**: 3',
    scores: { format: 5, factuality: 2, consistency: 4, realism: 4, quality: 3 },
    via: 'pattern',
  },
  {
    name: 'think block holding a fake verdict',
    reply:
      '<think>{"format": 1, "factuality": 1, "consistency": 1, "realism": 1, "quality": 1}</think>{"format": 5, "factuality": 5, "consistency": 5, "realism": 5, "quality": 5}',
    scores: { format: 5, factuality: 5, consistency: 5, realism: 5, quality: 5 },
  },
  {
    name: 'object cut short before the end, with the complete one earlier',
    reply: 'Final: {"format": 4, "factuality": 4, "consistency": 4, "realism": 4, "quality": 4}\nrestating: {"format": 4, "factu',
    scores: ALL4,
  },
  {
    name: 'braces inside strings',
    reply: '{"weaknesses": ["prints {} instead of a dict }"], "scores": {"format": 2, "factuality": 2, "consistency": 2, "realism": 2, "quality": 2}}',
    scores: { format: 2, factuality: 2, consistency: 2, realism: 2, quality: 2 },
  },
];

describe('parseVerdict on a corpus of messy replies', () => {
  for (const c of PARSEABLE) {
    it(c.name, () => {
      const v = parseVerdict(c.reply);
      if (!v.ok) throw new Error(v.error);
      expect(v.scores).toEqual(c.scores);
      if (c.via) expect(v.via).toBe(c.via);
    });
  }

  it('finds the verdict after thousands of stray braces', () => {
    const v = parseVerdict('{'.repeat(5000) + ' final: {"format": 3, "factuality": 3, "consistency": 3, "realism": 3, "quality": 3}');
    expect(v.ok && v.scores.format).toBe(3);
  });

  it('keeps strengths and weaknesses', () => {
    const v = parseVerdict(PARSEABLE[0].reply);
    expect(v.ok && v.strengths).toEqual(['right columns']);
    expect(v.ok && v.weaknesses).toEqual(['wrong PID']);
  });

  it('scores the dimensions a verdict gives and marks the missing ones invalid (0), never inventing scores', () => {
    const v = parseVerdict('{"scores": {"format": 4, "factuality": 3, "realism": 4}}');
    expect(v.ok && v.scores).toEqual({ format: 4, factuality: 3, consistency: 0, realism: 4, quality: 0 });
    const none = parseVerdict('{"scores": {"format": 0, "factuality": "n/a"}}');
    expect(none.ok).toBe(false);
    expect(!none.ok && none.error).toContain('format, factuality, consistency, realism, quality');
  });

  it('fails on a reply with nothing parseable', () => {
    for (const reply of [
      '',
      '   ',
      'I cannot evaluate this.',
      '{"scores": "excellent"}',
      '```json\n{ broken\n```',
      'format: great, factuality: poor',
      '{'.repeat(20000),
      "'{".repeat(10000),
    ]) {
      expect(parseVerdict(reply).ok, reply.slice(0, 40)).toBe(false);
    }
  });
});

describe('coerceScore', () => {
  it('reads numbers, strings and fractions', () => {
    expect(coerceScore(3)).toBe(3);
    // Python's round: half to even.
    expect(coerceScore(3.5)).toBe(4);
    expect(coerceScore(2.5)).toBe(2);
    expect(coerceScore(4.5)).toBe(4);
    expect(coerceScore(2.49)).toBe(2);
    // Strings by their part before '/', as the public parser reads them.
    expect(coerceScore('4/5')).toBe(4);
    expect(coerceScore('8/10')).toBe(5);
    expect(coerceScore('score: 5')).toBe(5);
    expect(coerceScore(9)).toBe(5);
    expect(coerceScore(true)).toBe(1);
    // 0 is the invalid mark, not a low score.
    expect(coerceScore(0)).toBe(null);
    expect(coerceScore(0.4)).toBe(null);
    expect(coerceScore('n/a')).toBe(null);
    expect(coerceScore(null)).toBe(null);
    expect(coerceScore(Number.NaN)).toBe(null);
  });
});

describe('repairJson', () => {
  it('never changes text inside strings', () => {
    const fixed = repairJson("{'a': 'x, y: z,}', b: 'it\\'s', c: [1, 2,],}");
    expect(JSON.parse(fixed)).toEqual({ a: 'x, y: z,}', b: "it's", c: [1, 2] });
  });
});
