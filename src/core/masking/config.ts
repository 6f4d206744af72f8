// The mask configuration as a file: what `lwm mask --write-config` writes, `lwm mask --config`
// and `lwm train --mask-config` read, the app's Train form sends with a run, and checkpoints carry
// in their metadata (`mask_config`). One JSON object:
//
//   { "format": "lwm-mask-config/1", "boilerplateMinRecurrence": 3, …, "ratios": { "echo": 0.05, … },
//     "useOverrides": true }
//
// Every key but `format` is optional; a missing one takes its default, so a file can hold only
// what it changes (`{"ratios": {"echo": 0.1}}`). An unknown key, a value of the wrong type or out
// of range is an error that names the file and the field.
import {
  checkMaskConfig,
  DEFAULT_MASK_CONFIG,
  MASK_CATEGORIES,
  maskConfig,
  NUMERIC_SETTINGS,
  UNIT_SETTINGS,
  type MaskCategory,
  type MaskConfig,
  type NumericSetting,
} from './rules.ts';

export const MASK_CONFIG_FORMAT = 'lwm-mask-config/1';

/** Settings of earlier versions, and what replaced them. */
const RETIRED: Record<string, string> = {
  echoMinOverlap: 'echo is now decided by Jac: use echoMinJaccard (and echoMaxNovelty)',
};

export class MaskConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MaskConfigError';
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A configuration from parsed JSON; `source` (a file name) starts every error message. */
export function maskConfigFromJson(value: unknown, source: string): MaskConfig {
  const fail = (field: string, message: string): never => {
    throw new MaskConfigError(`${source}: ${field}: ${message}`);
  };
  if (!isObject(value))
    throw new MaskConfigError(`${source}: a mask configuration must be a JSON object, got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`);
  const out = maskConfig();
  for (const [key, v] of Object.entries(value)) {
    if (key === 'format') {
      if (v !== MASK_CONFIG_FORMAT) fail('format', `must be "${MASK_CONFIG_FORMAT}", got ${JSON.stringify(v)}`);
    } else if (key === 'useOverrides') {
      if (typeof v !== 'boolean') fail('useOverrides', `must be true or false, got ${JSON.stringify(v)}`);
      out.useOverrides = v as boolean;
    } else if (key === 'ratios') {
      if (!isObject(v)) fail('ratios', `must be an object of loss ratios by category (${MASK_CATEGORIES.join(', ')}), got ${JSON.stringify(v)}`);
      for (const [cat, r] of Object.entries(v as Record<string, unknown>)) {
        if (!MASK_CATEGORIES.includes(cat as MaskCategory)) fail(`ratios.${cat}`, `no such category (categories: ${MASK_CATEGORIES.join(', ')})`);
        if (typeof r !== 'number' || !(r >= 0 && r <= 1)) fail(`ratios.${cat}`, `must be a number in [0, 1], got ${JSON.stringify(r)}`);
        out.ratios[cat as MaskCategory] = r as number;
      }
    } else if ((NUMERIC_SETTINGS as readonly string[]).includes(key)) {
      const unit = (UNIT_SETTINGS as readonly string[]).includes(key);
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (unit && v > 1))
        fail(key, `must be a number ${unit ? 'in [0, 1]' : '≥ 0'}, got ${JSON.stringify(v)}`);
      out[key as NumericSetting] = v as number;
    } else if (RETIRED[key]) {
      fail(key, `no longer a setting; ${RETIRED[key]}`);
    } else {
      fail(key, `no such setting (settings: format, ${NUMERIC_SETTINGS.join(', ')}, ratios, useOverrides)`);
    }
  }
  const problems = checkMaskConfig(out);
  if (problems.length) throw new MaskConfigError(`${source}: ${problems.join('; ')}`);
  return out;
}

/** Parses the text of a configuration file. */
export function parseMaskConfig(text: string, source: string): MaskConfig {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new MaskConfigError(`${source}: not valid JSON (${(e as Error).message})`);
  }
  return maskConfigFromJson(value, source);
}

/** The whole configuration as a file (every key, in the rule table's order), ending in a newline. */
export function maskConfigToJson(config: MaskConfig): string {
  const ordered: Record<string, unknown> = { format: MASK_CONFIG_FORMAT };
  for (const k of NUMERIC_SETTINGS) ordered[k] = config[k];
  ordered.ratios = Object.fromEntries(MASK_CATEGORIES.map((c) => [c, config.ratios[c]]));
  ordered.useOverrides = config.useOverrides;
  return JSON.stringify(ordered, null, 2) + '\n';
}

/** What differs from the defaults, as `key value` strings (empty for the defaults). */
export function maskConfigChanges(config: MaskConfig): string[] {
  const out: string[] = [];
  for (const k of NUMERIC_SETTINGS) if (config[k] !== DEFAULT_MASK_CONFIG[k]) out.push(`${k} ${config[k]}`);
  for (const c of MASK_CATEGORIES) if (config.ratios[c] !== DEFAULT_MASK_CONFIG.ratios[c]) out.push(`ratios.${c} ${config.ratios[c]}`);
  if (config.useOverrides !== DEFAULT_MASK_CONFIG.useOverrides) out.push(`useOverrides ${config.useOverrides}`);
  return out;
}
