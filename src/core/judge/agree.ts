// Judge agreement: do two judges rank models alike (Spearman ρ, Kendall τ-b over the models'
// mean scores) and do they agree sample by sample (Pearson r)? docs/method.md §8 expects rankings to agree
// across judge models even where absolute scores differ.

/** Pearson's r; NaN when either side has no variance or fewer than two points. */
export function pearson(x: readonly number[], y: readonly number[]): number {
  if (x.length !== y.length) throw new Error(`pearson: ${x.length} values against ${y.length}`);
  const n = x.length;
  if (n < 2) return Number.NaN;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = x[i] - mx;
    const dy = y[i] - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0) return Number.NaN;
  return sxy / Math.sqrt(sxx * syy);
}

/** 1-based ranks, ties sharing the mean of the ranks they span (fractional ranking). */
export function averageRanks(x: readonly number[]): number[] {
  const order = x.map((_v, i) => i).sort((a, b) => x[a] - x[b]);
  const ranks = new Array<number>(x.length);
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && x[order[j + 1]] === x[order[i]]) j++;
    const r = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[order[k]] = r;
    i = j + 1;
  }
  return ranks;
}

/** Spearman's ρ as Pearson's r of the average ranks, which is exact under ties. */
export function spearman(x: readonly number[], y: readonly number[]): number {
  if (x.length !== y.length) throw new Error(`spearman: ${x.length} values against ${y.length}`);
  return pearson(averageRanks(x), averageRanks(y));
}

/**
 * Kendall's τ-b: (concordant − discordant) / sqrt((n0 − n1)(n0 − n2)), with n1, n2 the pairs
 * tied in x, in y. τ-b (not τ-a) because judges give integer scores and ties are common; it
 * equals τ-a when there are none. NaN when either side is constant. O(n²): rankings compare a
 * handful of models, and per-sample use stays in the thousands.
 */
export function kendallTauB(x: readonly number[], y: readonly number[]): number {
  if (x.length !== y.length) throw new Error(`kendall: ${x.length} values against ${y.length}`);
  const n = x.length;
  let concordant = 0;
  let discordant = 0;
  let tiesX = 0;
  let tiesY = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const dx = Math.sign(x[i] - x[j]);
      const dy = Math.sign(y[i] - y[j]);
      if (dx === 0) tiesX++;
      if (dy === 0) tiesY++;
      if (dx !== 0 && dy !== 0) {
        if (dx === dy) concordant++;
        else discordant++;
      }
    }
  }
  const n0 = (n * (n - 1)) / 2;
  const denom = Math.sqrt((n0 - tiesX) * (n0 - tiesY));
  return denom === 0 ? Number.NaN : (concordant - discordant) / denom;
}

/** One judged sample: which judge scored which model's prediction for which sample key. */
export interface JudgedScore {
  judge: string;
  model: string;
  /** Sample identity shared across models and judges (e.g. `id#turn_idx`). */
  key: string;
  /** The sample's rubric mean, 1–5. */
  score: number;
}

export interface JudgePairAgreement {
  judges: [string, string];
  /** Models both judges scored, in the order used for the rankings. */
  models: string[];
  /** Each model's mean over the samples both judges scored for it. */
  means: [number[], number[]];
  spearman: number;
  kendallTauB: number;
  /** Over all (model, sample) pairs both judges scored. */
  pearson: number;
  samples: number;
}

/** Agreement for every pair of judges, over the (model, sample) pairs both scored. */
export function judgeAgreement(scores: readonly JudgedScore[]): JudgePairAgreement[] {
  const byJudge = new Map<string, Map<string, number>>();
  for (const s of scores) {
    let m = byJudge.get(s.judge);
    if (!m) byJudge.set(s.judge, (m = new Map()));
    m.set(`${s.model}\u0000${s.key}`, s.score);
  }
  const judges = [...byJudge.keys()].sort();
  const out: JudgePairAgreement[] = [];
  for (let a = 0; a < judges.length; a++) {
    for (let b = a + 1; b < judges.length; b++) {
      const ma = byJudge.get(judges[a])!;
      const mb = byJudge.get(judges[b])!;
      const xa: number[] = [];
      const xb: number[] = [];
      const perModel = new Map<string, { a: number; b: number; n: number }>();
      for (const [k, va] of ma) {
        const vb = mb.get(k);
        if (vb === undefined) continue;
        xa.push(va);
        xb.push(vb);
        const model = k.slice(0, k.indexOf('\u0000'));
        const acc = perModel.get(model) ?? { a: 0, b: 0, n: 0 };
        acc.a += va;
        acc.b += vb;
        acc.n++;
        perModel.set(model, acc);
      }
      const models = [...perModel.keys()].sort();
      const meansA = models.map((m) => perModel.get(m)!.a / perModel.get(m)!.n);
      const meansB = models.map((m) => perModel.get(m)!.b / perModel.get(m)!.n);
      out.push({
        judges: [judges[a], judges[b]],
        models,
        means: [meansA, meansB],
        spearman: spearman(meansA, meansB),
        kendallTauB: kendallTauB(meansA, meansB),
        pearson: pearson(xa, xb),
        samples: xa.length,
      });
    }
  }
  return out;
}
