// Evaluation figures per domain. A figure of one domain is stored under `<metric>/<domain>`
// (eval_loss/terminal, eval_judge_mean/web, eval_reward/mcp) beside the figure over all domains
// (eval_loss): no metric name holds a '/', while a domain from data may hold '_', so the slash
// keeps both readable. Plain data, no imports: the pipeline writes these keys, the CLI and the
// Train view read them back.

const SEPARATOR = '/';

/** The key of `metric` on `domain` alone. */
export function domainMetricKey(metric: string, domain: string): string {
  return `${metric}${SEPARATOR}${domain}`;
}

/** A per-domain key read back (split at its first '/'); null for a figure over all domains. */
export function parseDomainMetric(key: string): { metric: string; domain: string } | null {
  const i = key.indexOf(SEPARATOR);
  return i > 0 && i < key.length - 1 ? { metric: key.slice(0, i), domain: key.slice(i + 1) } : null;
}

/** Per-domain figures as {domain: {metric: value}}, domains in name order, metrics in the order written. */
export type DomainFigures = Record<string, Record<string, number>>;

/** The per-domain figures among a record of metric values. */
export function domainFigures(values: Readonly<Record<string, number>>): DomainFigures {
  const out: DomainFigures = Object.create(null);
  for (const key of Object.keys(values)) {
    const k = parseDomainMetric(key);
    if (k) (out[k.domain] ??= Object.create(null))[k.metric] = values[key];
  }
  return sortedByName(out);
}

function sortedByName(figures: DomainFigures): DomainFigures {
  const out: DomainFigures = Object.create(null);
  for (const d of Object.keys(figures).sort()) out[d] = figures[d];
  return out;
}

/** Weighted means of figures per (domain, metric), read as `<metric>/<domain>` metrics. */
export class DomainMeans {
  private readonly sums = new Map<string, Map<string, { sum: number; weight: number }>>();

  /** One value of weight 1 (a judged sample's score). */
  add(domain: string, metric: string, value: number): void {
    this.addWeighted(domain, metric, value, 1);
  }

  /** A sum of weighted values and their total weight (a row's Σ w·loss and Σ w). */
  addWeighted(domain: string, metric: string, sum: number, weight: number): void {
    if (!(weight > 0)) return;
    let m = this.sums.get(domain);
    if (!m) this.sums.set(domain, (m = new Map()));
    const e = m.get(metric) ?? { sum: 0, weight: 0 };
    m.set(metric, { sum: e.sum + sum, weight: e.weight + weight });
  }

  /** Every mean under its `<metric>/<domain>` key. */
  metrics(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [domain, m] of this.sums) for (const [metric, e] of m) out[domainMetricKey(metric, domain)] = e.sum / e.weight;
    return out;
  }
}

/**
 * The loss of each domain's rows in one evaluated batch: row r of `domains` covers positions
 * r·T … r·T+T−1; a domain's Σ w·ℓ / Σ w over its rows of the batch is one value of its `eval_loss`.
 * So a domain's figure is, like `eval_loss` itself, a mean over the eval batches of a weighted
 * mean loss within each batch, and data of one domain gives that domain exactly `eval_loss`.
 */
export function addBatchLosses(
  means: DomainMeans,
  batch: { B: number; T: number; weights: ArrayLike<number> },
  nll: ArrayLike<number>,
  domains: readonly string[],
  metric = 'eval_loss',
): void {
  const sums = new Map<string, { sum: number; weight: number }>();
  for (let r = 0; r < batch.B; r++) {
    const e = sums.get(domains[r]) ?? { sum: 0, weight: 0 };
    for (let t = r * batch.T; t < (r + 1) * batch.T; t++) {
      e.sum += batch.weights[t] * nll[t];
      e.weight += batch.weights[t];
    }
    sums.set(domains[r], e);
  }
  for (const [domain, e] of sums) if (e.weight > 0) means.add(domain, metric, e.sum / e.weight);
}

/** Per-domain figures as one log line: "eval by domain at step 40: mcp eval_loss 2.341 · os eval_loss 2.107". */
export function domainFiguresLine(step: number, figures: DomainFigures): string | null {
  const parts = Object.entries(figures).map(
    ([d, m]) =>
      `${d} ${Object.entries(m)
        .map(([k, v]) => `${k} ${Math.abs(v) >= 100 ? v.toFixed(1) : v.toPrecision(4)}`)
        .join(', ')}`,
  );
  return parts.length ? `eval by domain at step ${step}: ${parts.join(' · ')}` : null;
}
