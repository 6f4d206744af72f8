// `lwm mask FILE [--json] [--set key=value ...]`: the mask-category table per domain (count and
// share of turns), mean loss weight, and with --json the metric histograms and the config used.
import type { CliIO } from '../io.ts';
import { parseCommandArgs, UsageError } from '../io.ts';
import { checkMaskConfig, DEFAULT_MASK_CONFIG, MASK_CATEGORIES, maskConfig, maskStats, type MaskCategory, type MaskConfig } from '../../core/masking/index.ts';
import { IMPORT_OPTIONS, importFormat, loadFile, singleFile } from './validate.ts';
import { table } from './expand.ts';

const USAGE = 'lwm mask FILE [--json] [--set THRESHOLD=VALUE | --set ratios.CATEGORY=VALUE ...] [--format F] [--domain D]';

/** `--set echoMinOverlap=0.5 --set ratios.other=0.3` onto the defaults. */
export function configFromSettings(settings: string[]): MaskConfig {
  const config = maskConfig();
  for (const s of settings) {
    const m = /^([\w.]+)=(.*)$/.exec(s);
    if (!m) throw new UsageError(`--set expects KEY=VALUE, got '${s}'`);
    const [, key, raw] = m;
    if (key === 'useOverrides') {
      if (raw !== 'true' && raw !== 'false') throw new UsageError(`--set useOverrides expects true or false, got '${raw}'`);
      config.useOverrides = raw === 'true';
      continue;
    }
    const value = Number(raw);
    if (raw === '' || !Number.isFinite(value)) throw new UsageError(`--set ${key} expects a number, got '${raw}'`);
    if (key.startsWith('ratios.')) {
      const cat = key.slice(7) as MaskCategory;
      if (!MASK_CATEGORIES.includes(cat)) throw new UsageError(`--set ${key}: no such category (categories: ${MASK_CATEGORIES.join(', ')})`);
      config.ratios[cat] = value;
    } else if (key in DEFAULT_MASK_CONFIG && typeof (DEFAULT_MASK_CONFIG as unknown as Record<string, unknown>)[key] === 'number') {
      (config as unknown as Record<string, number>)[key] = value;
    } else {
      const known = Object.keys(DEFAULT_MASK_CONFIG).filter((k) => k !== 'ratios' && k !== 'useOverrides');
      throw new UsageError(`--set ${key}: no such setting (settings: ${known.join(', ')}, useOverrides, ratios.CATEGORY)`);
    }
  }
  const problems = checkMaskConfig(config);
  if (problems.length) throw new UsageError(problems.join('; '));
  return config;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export default async function mask(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { ...IMPORT_OPTIONS, json: { type: 'boolean' }, set: { type: 'string', multiple: true } });
  if (values.help) {
    io.out(`usage: ${USAGE}\nDefaults:\n${JSON.stringify(DEFAULT_MASK_CONFIG, null, 2)}\n`);
    return 0;
  }
  const file = singleFile(positionals, USAGE, io);
  const config = configFromSettings(values.set ?? []);
  const r = await loadFile(io, file, { format: importFormat(values.format), domain: values.domain, keepRaw: false });
  if (!r.readable) return 1;
  const stats = maskStats(r.trajectories, config);
  if (values.json) {
    io.out(JSON.stringify({ file, ...stats, errors: r.errorCount }) + '\n');
    return r.errorCount ? 1 : 0;
  }
  const header = ['domain', 'turns', ...MASK_CATEGORIES, 'mean weight'];
  const row = (name: string, c: typeof stats.overall) => [name, String(c.total), ...MASK_CATEGORIES.map((k) => `${c.counts[k]} (${pct(c.shares[k])})`), c.meanWeight.toFixed(3)];
  const rows = [header, ...Object.entries(stats.perDomain).sort(([a], [b]) => a.localeCompare(b)).map(([d, c]) => row(d, c)), row('all', stats.overall)];
  io.out(table(rows));
  io.out(`loss ratios: ${MASK_CATEGORIES.map((k) => `${k} ${config.ratios[k]}`).join(', ')}\n`);
  return r.errorCount ? 1 : 0;
}
