import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  categorizeDataset,
  categorizeTurn,
  checkMaskConfig,
  DEFAULT_MASK_CONFIG,
  extractWords,
  maskConfig,
  maskStats,
  normalizeForRecurrence,
  tokenLossWeights,
  turnFeatures,
  turnMetrics,
  type MaskCategory,
  type TurnFeatures,
} from './index.ts';
import { codePointLength } from './words.ts';
import { emptySystemPrompt, type Trajectory } from '../schema/types.ts';
import { trainBpe } from '../tokenizer/index.ts';

const traj = (id: string, domain: string, turns: [string, string][]): Trajectory => ({
  id,
  domain,
  system_prompt: emptySystemPrompt(),
  turns: turns.map(([action, observation]) => ({ action, observation })),
});
/** Features with neutral defaults, so each case sets only what its rule reads. */
const f = (over: Partial<TurnFeatures>): TurnFeatures => ({ ol: 0, nov: 0.5, jac: 0, r: 1, obsWords: 30, recurrence: 1, empty: false, ...over });

describe('word extraction', () => {
  it('lower-cases, splits on punctuation and keeps identifiers with underscores', () => {
    expect(extractWords('cat /home/User/my_file.TXT')).toEqual(['cat', 'home', 'user', 'my_file', 'txt']);
    expect(extractWords("don't stop-me: now!")).toEqual(['don', 't', 'stop', 'me', 'now']);
    expect(extractWords('___ __init__ x_')).toEqual(['__init__', 'x_']);
  });
  it('is Unicode-aware: accents, other scripts, NFKC, unspaced scripts per character', () => {
    expect(extractWords('Café Ünïcode Привет мир')).toEqual(['café', 'ünïcode', 'привет', 'мир']);
    expect(extractWords('Ｆｉｌｅ１')).toEqual(['file1']);
    expect(extractWords('数据abc已保存')).toEqual(['数', '据', 'abc', '已', '保', '存']);
    expect(extractWords('e\u0301te\u0301')).toEqual(['été']);
    expect(extractWords('🎉 ✓ — … 42')).toEqual(['42']);
  });
  it('counts code points for lengths', () => {
    expect(codePointLength('a🎉b')).toBe(3);
    expect(codePointLength('\ud800x')).toBe(2);
  });
});

describe('turnMetrics', () => {
  it('computes OL, Nov, Jac and R on word sets', () => {
    const m = turnMetrics('echo hello world', 'hello world hello');
    expect(m.ol).toBeCloseTo(2 / 3);
    expect(m.nov).toBe(0);
    expect(m.jac).toBeCloseTo(2 / 3);
    expect(m.r).toBeCloseTo(17 / 16);
  });
  it('has defined values for empty actions and observations', () => {
    expect(turnMetrics('', '')).toEqual({ ol: 0, nov: 0, jac: 0, r: 0 });
    expect(turnMetrics('', 'abc def')).toEqual({ ol: 0, nov: 1, jac: 0, r: 7 });
    expect(turnMetrics('ls -la', '')).toEqual({ ol: 0, nov: 0, jac: 0, r: 0 });
    expect(turnMetrics('!!!', '...')).toEqual({ ol: 0, nov: 0, jac: 0, r: 1 });
  });
});

describe('categorizeTurn: every rule and its boundaries', () => {
  const c = DEFAULT_MASK_CONFIG;
  it('boilerplate: empty observations and recurrence at the threshold', () => {
    expect(categorizeTurn(f({ empty: true, ol: 1, nov: 0 }))).toBe('boilerplate');
    expect(categorizeTurn(f({ recurrence: c.boilerplateMinRecurrence }))).toBe('boilerplate');
    expect(categorizeTurn(f({ recurrence: c.boilerplateMinRecurrence - 1 }))).not.toBe('boilerplate');
  });
  it('echo: Jac ≥ 0.5 and Nov ≤ 0.4, inclusive', () => {
    expect(categorizeTurn(f({ jac: 0.5, ol: 0.5, nov: 0.4 }))).toBe('echo');
    expect(categorizeTurn(f({ jac: 0.4999, ol: 0.5, nov: 0.4 }))).not.toBe('echo');
    expect(categorizeTurn(f({ jac: 0.5, ol: 0.5, nov: 0.4001 }))).not.toBe('echo');
    // OL alone does not make an echo: a transform keeps all of few action words.
    expect(categorizeTurn(f({ jac: 0.43, ol: 0.43, nov: 0 }))).toBe('transform');
  });
  it('retrieval: Nov ≥ 0.6 and (R ≥ 4 or OL ≤ 0.25)', () => {
    expect(categorizeTurn(f({ nov: 0.6, r: 4, ol: 0.9 }))).toBe('retrieval');
    expect(categorizeTurn(f({ nov: 0.6, r: 0.3, ol: 0.25 }))).toBe('retrieval');
    expect(categorizeTurn(f({ nov: 0.5999, r: 4, ol: 0 }))).not.toBe('retrieval');
    expect(categorizeTurn(f({ nov: 0.6, r: 3.999, ol: 0.2501 }))).not.toBe('retrieval');
  });
  it('expansion: Nov ≥ 0.4, R ≥ 1.5 and OL ≥ 0.3', () => {
    expect(categorizeTurn(f({ nov: 0.4, r: 1.5, ol: 0.3 }))).toBe('expansion');
    expect(categorizeTurn(f({ nov: 0.3999, r: 1.5, ol: 0.3 }))).not.toBe('expansion');
    expect(categorizeTurn(f({ nov: 0.4, r: 1.4999, ol: 0.3 }))).not.toBe('expansion');
    expect(categorizeTurn(f({ nov: 0.4, r: 1.5, ol: 0.2999 }))).not.toBe('expansion');
  });
  it('transform: Nov ≤ 0.25 and OL ≥ 0.2', () => {
    expect(categorizeTurn(f({ nov: 0.25, ol: 0.2 }))).toBe('transform');
    expect(categorizeTurn(f({ nov: 0.2501, ol: 0.2 }))).not.toBe('transform');
    expect(categorizeTurn(f({ nov: 0.25, ol: 0.1999 }))).not.toBe('transform');
  });
  it('action: at most 24 words and R ≤ 3; otherwise other', () => {
    expect(categorizeTurn(f({ obsWords: 24, r: 3 }))).toBe('action');
    expect(categorizeTurn(f({ obsWords: 25, r: 3 }))).toBe('other');
    expect(categorizeTurn(f({ obsWords: 24, r: 3.001 }))).toBe('other');
  });
  it('follows the configured thresholds', () => {
    const loose = maskConfig({ echoMinJaccard: 0.4 });
    expect(categorizeTurn(f({ jac: 0.43, ol: 0.43, nov: 0 }), loose)).toBe('echo');
    expect(categorizeTurn(f({ jac: 0.43, ol: 0.43, nov: 0 }))).toBe('transform');
    expect(categorizeTurn(f({ nov: 0.8, ol: 0.2, jac: 0.1, r: 0.4, obsWords: 5 }))).toBe('retrieval');
    expect(categorizeTurn(f({ nov: 0.8, ol: 0.2, jac: 0.1, r: 0.4, obsWords: 5 }), maskConfig({ retrievalMaxOverlap: 0.1 }))).toBe('action');
  });
});

describe('categorizeDataset on agent-like turns', () => {
  const listing =
    'total 24\ndrwxr-xr-x 2 user user 4096 Mar 3 10:12 .\n-rw-r--r-- 1 user user 812 Mar 3 10:12 setup.py\n-rw-r--r-- 1 user user 1290 Mar 3 10:12 README.md';
  const ts = [
    traj('t1', 'terminal', [
      ['mkdir -p src/utils', ''],
      ['cat README.md', '# Demo project\n\nThis project parses invoices and exports them as CSV files for the accounting team.'],
      ['echo hello world', 'hello world'],
      ['ls -la', listing],
      ['rm -v build.log', "removed 'build.log'"],
      ['python3 -c "print(sorted([3, 1, 2]))"', '[1, 2, 3]'],
    ]),
    traj('t2', 'mcp', [
      ['create_file(path="a.txt")', '{"status": "ok"}'],
      ['delete_file(path="b.txt")', '{"status": "ok"}'],
      ['rename(src="c", dst="d")', '{"status": "ok"}'],
      ['think(thought="the user wants the cheapest flight")', '{"thought": "the user wants the cheapest flight"}'],
      ['create_event(title="Team sync", day="Monday")', 'Created event "Team sync" on Monday 10:00-10:30 with 4 attendees; reminder set 15 minutes before'],
    ]),
  ];
  const masks = categorizeDataset(ts);
  const cats = masks.map((m) => m.turns.map((t) => t.category));
  it('puts each typical turn in the expected category', () => {
    expect(cats[0]).toEqual(['boilerplate', 'retrieval', 'echo', 'retrieval', 'action', 'transform'] satisfies MaskCategory[]);
    expect(cats[1]).toEqual(['boilerplate', 'boilerplate', 'boilerplate', 'echo', 'expansion'] satisfies MaskCategory[]);
  });
  it('weights with the category ratio, or the turn override when allowed', () => {
    expect(masks[0].turns.map((t) => t.weight)).toEqual([0.1, 1, 0.05, 1, 0.6, 0.4]);
    const withOverride = structuredClone(ts);
    withOverride[0].turns[1].metadata = { loss_weight_override: 0 };
    expect(categorizeDataset(withOverride)[0].turns[1]).toMatchObject({ category: 'retrieval', weight: 0, overridden: true });
    expect(categorizeDataset(withOverride, maskConfig({ useOverrides: false }))[0].turns[1]).toMatchObject({ weight: 1, overridden: false });
    expect(categorizeDataset(ts, maskConfig({ ratios: { retrieval: 0.7 } }))[0].turns[1].weight).toBe(0.7);
  });
  it('needs different actions for boilerplate: the same read repeated is not boilerplate', () => {
    const same = [1, 2, 3].map((i) => traj(`r${i}`, 'os', [['cat /etc/hostname', 'web-01']]));
    expect(categorizeDataset(same)[0].turns[0].category).not.toBe('boilerplate');
    expect(normalizeForRecurrence('  Saved 12 files\n')).toBe(normalizeForRecurrence('saved 3 FILES'));
    const long = [1, 2, 3].map((i) => traj(`l${i}`, 'os', [[`cmd${i}`, 'x '.repeat(150)]]));
    expect(categorizeDataset(long)[0].turns[0].recurrence).toBe(1);
  });
  it('computes counts, shares, mean weights per domain and metric histograms', () => {
    const s = maskStats(ts);
    expect(s.overall.total).toBe(11);
    expect(s.overall.counts.boilerplate).toBe(4);
    expect(s.perDomain.mcp.counts.boilerplate).toBe(3);
    expect(s.perDomain.terminal.shares.retrieval).toBeCloseTo(2 / 6);
    expect(Object.values(s.overall.shares).reduce((a, b) => a + b, 0)).toBeCloseTo(1);
    expect(s.perDomain.terminal.meanWeight).toBeCloseTo((0.1 + 1 + 0.05 + 1 + 0.6 + 0.4) / 6);
    for (const h of Object.values(s.histograms)) expect(h.counts.reduce((a, b) => a + b, 0)).toBe(11);
    // OL = 1 lands in the last bin, which includes its upper edge.
    const one = maskStats([traj('e', 'os', [['say hi', 'say hi']])]);
    expect(one.histograms.ol.counts.at(-1)).toBe(1);
    expect(one.histograms.nov.counts[0]).toBe(1);
  });
  it('checks configurations', () => {
    expect(checkMaskConfig(DEFAULT_MASK_CONFIG)).toEqual([]);
    expect(checkMaskConfig(maskConfig({ echoMinJaccard: 2, ratios: { echo: -1 } }))).toEqual([
      'echoMinJaccard must be in [0, 1], got 2',
      'ratios.echo must be in [0, 1], got -1',
    ]);
  });
  it('turnFeatures agrees with turnMetrics', () => {
    const a = 'grep -r TODO src';
    const o = 'src/a.ts: // TODO fix';
    expect(turnFeatures(a, o, 1)).toMatchObject(turnMetrics(a, o));
  });
});

describe('tokenLossWeights', () => {
  it('gives every observation token the weight and the context none, aligned one to one', () => {
    const tok = trainBpe(['the observation text and the context text '.repeat(20)], { vocabSize: 300 });
    const segs = [
      { text: '<|action|>\nls -la\n<|observation|>\n', weight: 0 },
      { text: 'the observation text', weight: 0.6 },
      { text: '\n</predicted_observation>', weight: 0.6 },
    ];
    const w = tokenLossWeights(tok, segs);
    expect(w.ids.length).toBe(w.weights.length);
    expect(tok.decode(w.ids)).toBe(segs.map((s) => s.text).join(''));
    const n0 = tok.encode(segs[0].text).length;
    const n1 = tok.encode(segs[1].text).length;
    expect([...w.weights.slice(0, n0)].every((x) => x === 0)).toBe(true);
    expect(tok.decode(w.ids.slice(n0, n0 + n1))).toBe('the observation text');
    expect([...w.weights.slice(n0)].every((x) => Math.abs(x - 0.6) < 1e-6)).toBe(true);
  });
});

describe('docs/masking.md: every worked example is filed as the doc says', () => {
  const doc = readFileSync(new URL('../../../docs/masking.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Worked examples'), doc.indexOf('\n## ', doc.indexOf('## Worked examples') + 1));
  const cell = (c: string) => c.trim().replace(/^`|`$/g, '');
  const rows = section
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| category') && !l.startsWith('|---'))
    .map((l) => {
      // Split on the table's pipes only: the JSON cells hold no unescaped pipe.
      const cells = l.slice(1, -1).split(' | ').map(cell);
      const [category, action, observation, recurrence, ol, nov, jac, r] = cells;
      return {
        category: category as MaskCategory,
        action: JSON.parse(action) as string,
        observation: JSON.parse(observation) as string,
        recurrence: Number(recurrence),
        metrics: { ol: Number(ol), nov: Number(nov), jac: Number(jac), r: Number(r) },
      };
    });
  it("covers all seven categories, and the method's own examples", () => {
    expect(new Set(rows.map((r) => r.category))).toEqual(new Set(['retrieval', 'expansion', 'action', 'transform', 'other', 'boilerplate', 'echo']));
    expect(rows.find((r) => r.action === 'Think(check config)')?.category).toBe('echo');
    for (const a of ['cat /etc/hostname', 'pwd']) expect(rows.find((r) => r.action === a)?.category).toBe('retrieval');
  });
  it('the limits the doc names hold as stated', () => {
    expect(doc).toContain("`rm build.log` → `removed 'build.log'` has exactly");
    expect(categorizeTurn(turnFeatures('rm build.log', "removed 'build.log'", 1))).toBe('echo');
    expect(categorizeTurn(turnFeatures('search("who founded Fenbra Foundry")', 'Fenbra Foundry was founded in 1883 by Gala Garzo.', 1))).toBe('action');
  });
  for (const row of rows) {
    it(`${row.category}: ${row.action.slice(0, 50)}`, () => {
      const features = turnFeatures(row.action, row.observation, row.recurrence);
      for (const k of ['ol', 'nov', 'jac', 'r'] as const) expect(Number(features[k].toFixed(2)), `${k} in the doc`).toBe(row.metrics[k]);
      expect(categorizeTurn(features)).toBe(row.category);
    });
  }
});
