// `lwm mask FILE [--json] [--config CFG] [--set key=value ...] [--write-config OUT]`: the
// mask-category table per domain (count and share of turns), mean loss weight, and with --json
// the metric histograms and the config used. The configuration is the defaults, then a
// configuration file (docs/masking.md; the format `lwm train --mask-config` reads), then --set.
import { readFileSync, writeFileSync } from 'node:fs';
import type { CliIO } from '../io.ts';
import { parseCommandArgs, UsageError } from '../io.ts';
import {
  checkMaskConfig,
  DEFAULT_MASK_CONFIG,
  MASK_CATEGORIES,
  maskConfig,
  maskConfigToJson,
  maskStats,
  parseMaskConfig,
  type MaskCategory,
  type MaskConfig,
} from '../../core/masking/index.ts';
import { IMPORT_OPTIONS, importFormat, loadFile, singleFile } from './validate.ts';
import { table } from './expand.ts';

const USAGE = 'lwm mask FILE [--json] [--config CFG] [--set THRESHOLD=VALUE | --set ratios.CATEGORY=VALUE ...] [--write-config OUT] [--format F] [--domain D]';

/**
 * A mask configuration file, or null after saying on stderr what is wrong with it (the file and
 * the field). Shared by `lwm mask --config` and `lwm train --mask-config`.
 */
export function readMaskConfigFile(path: string, io: CliIO): MaskConfig | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    io.err(`${path}: cannot read the mask configuration (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
    return null;
  }
  try {
    return parseMaskConfig(text, path);
  } catch (e) {
    io.err(`${(e as Error).message}\n`);
    return null;
  }
}

/** `--set echoMinJaccard=0.4 --set ratios.other=0.3` onto `base` (default: the defaults). */
export function configFromSettings(settings: string[], base: MaskConfig = maskConfig()): MaskConfig {
  const config = structuredClone(base);
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
    } else if (Object.hasOwn(DEFAULT_MASK_CONFIG, key) && typeof (DEFAULT_MASK_CONFIG as unknown as Record<string, unknown>)[key] === 'number') {
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
  const { values, positionals } = parseCommandArgs(argv, {
    ...IMPORT_OPTIONS,
    json: { type: 'boolean' },
    set: { type: 'string', multiple: true },
    config: { type: 'string' },
    'write-config': { type: 'string' },
  });
  if (values.help) {
    io.out(`usage: ${USAGE}\nDefaults:\n${JSON.stringify(DEFAULT_MASK_CONFIG, null, 2)}\n`);
    return 0;
  }
  const file = singleFile(positionals, USAGE, io);
  const base = values.config ? readMaskConfigFile(values.config, io) : maskConfig();
  if (!base) return 1;
  const config = configFromSettings(values.set ?? [], base);
  if (values['write-config']) {
    writeFileSync(values['write-config'], maskConfigToJson(config));
    io.err(`wrote the mask configuration to ${values['write-config']}\n`);
  }
  const r = await loadFile(io, file, { format: importFormat(values.format), domain: values.domain, keepRaw: false });
  if (!r.readable) return 1;
  const stats = maskStats(r.trajectories, config);
  if (values.json) {
    io.out(JSON.stringify({ file, ...stats, errors: r.errorCount }) + '\n');
    return r.errorCount ? 1 : 0;
  }
  const header = ['domain', 'turns', ...MASK_CATEGORIES, 'mean weight'];
  const row = (name: string, c: typeof stats.overall) => [
    name,
    String(c.total),
    ...MASK_CATEGORIES.map((k) => `${c.counts[k]} (${pct(c.shares[k])})`),
    c.meanWeight.toFixed(3),
  ];
  const rows = [
    header,
    ...Object.entries(stats.perDomain)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([d, c]) => row(d, c)),
    row('all', stats.overall),
  ];
  io.out(table(rows));
  io.out(`loss ratios: ${MASK_CATEGORIES.map((k) => `${k} ${config.ratios[k]}`).join(', ')}\n`);
  return r.errorCount ? 1 : 0;
}
