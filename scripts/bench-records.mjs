// Bench records: reading a suite's JSON-lines output and appending records to the results file
// as soon as each suite finishes, so a crash or a failing suite later in the run loses nothing.
// A record is {"suite","case","engine","metric","value","unit", ...run info}, one JSON object a line.
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

const FIELDS = ['suite', 'case', 'engine', 'metric', 'unit'];

/**
 * Parses a suite's JSON-lines output: the records, and an error naming the suite and line for
 * each line that is not a record (those are left out; the others are kept).
 */
export function parseRecords(text, suite) {
  const records = [];
  const errors = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    const at = `suite '${suite}' output line ${i + 1}`;
    let r;
    try {
      r = JSON.parse(line);
    } catch (e) {
      errors.push(`${at} is not JSON (expected one record per line): ${e.message}`);
      continue;
    }
    if (typeof r !== 'object' || r === null || Array.isArray(r)) {
      errors.push(`${at} is not a JSON object`);
      continue;
    }
    const missing = [...FIELDS.filter((f) => typeof r[f] !== 'string'), ...('value' in r ? [] : ['value'])];
    if (missing.length) {
      errors.push(`${at} lacks ${missing.join(', ')}`);
      continue;
    }
    records.push(r);
  }
  return { records, errors };
}

/** Appends records (with `extra` fields added to each) to `out` now; returns what was written. */
export function appendRecords(out, records, extra = {}) {
  const written = records.map((r) => ({ ...r, ...extra }));
  if (!written.length) return written;
  mkdirSync(dirname(out), { recursive: true });
  appendFileSync(out, written.map((r) => JSON.stringify(r) + '\n').join(''));
  return written;
}

/** Our engine's ratio against each peer measured in the same suite, case and metric. */
export function speedupRecords(records, runId) {
  const out = [];
  for (const o of records.filter((r) => r.engine.startsWith('lwm') && Number.isFinite(r.value))) {
    const higherIsBetter = /gflops|tokens_per_s|per_s$/.test(o.metric);
    for (const p of records.filter(
      (r) => !r.engine.startsWith('lwm') && r.suite === o.suite && r.case === o.case && r.metric === o.metric && Number.isFinite(r.value),
    )) {
      const ratio = higherIsBetter ? o.value / p.value : p.value / o.value;
      out.push({
        suite: o.suite,
        case: o.case,
        engine: `lwm-vs-${p.engine}`,
        metric: `speedup_${o.metric}`,
        value: ratio,
        unit: 'x',
        peer: p.engine,
        run: runId,
      });
    }
  }
  return out;
}
