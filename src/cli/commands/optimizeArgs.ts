// `lwm optimize`'s command line: the options, their checks (each error names the option and the
// value), what a resumed run keeps from the run it continues (DIR/run.json), and reading the
// starting template (a template JSON as the Prompts view stores it, an old JSON template, a
// template text, or a built-in version name).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { errnoText, FileError, inputFileProblem, intOption, type parseCommandArgs, UsageError } from '../io.ts';
import { DOMAINS } from '../../core/schema/types.ts';
import { BUILTIN_TEMPLATES, checkTemplateText, templateTextFor, type PromptTemplate } from '../../core/templates/builtin.ts';
import { isLegacyTemplate, normalizeTemplate } from '../../core/templates/legacy.ts';
import { checkBaseUrl } from './judge.ts';

export const OPTIONS = {
  template: { type: 'string' },
  'text-for': { type: 'string' },
  data: { type: 'string' },
  domain: { type: 'string' },
  n: { type: 'string' },
  'gen-seed': { type: 'string' },
  'eval-fraction': { type: 'string' },
  'split-seed': { type: 'string' },
  dev: { type: 'string' },
  test: { type: 'string' },
  // The simulator (lwm infer's options).
  backend: { type: 'string' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
  'api-key': { type: 'string' },
  'max-tokens': { type: 'string' },
  temperature: { type: 'string' },
  'top-p': { type: 'string' },
  concurrency: { type: 'string' },
  'no-stream': { type: 'boolean' },
  timeout: { type: 'string' },
  retries: { type: 'string' },
  'prefix-slots': { type: 'string' },
  // The judge (lwm judge's options, prefixed).
  judge: { type: 'string' },
  'judge-base-url': { type: 'string' },
  'judge-model': { type: 'string' },
  'judge-api-key': { type: 'string' },
  'judge-max-tokens': { type: 'string' },
  'judge-temperature': { type: 'string' },
  'judge-prompts': { type: 'string' },
  'judge-concurrency': { type: 'string' },
  'judge-retries': { type: 'string' },
  'judge-timeout': { type: 'string' },
  // The optimizer.
  optimizer: { type: 'string' },
  'optimizer-base-url': { type: 'string' },
  'optimizer-model': { type: 'string' },
  'optimizer-api-key': { type: 'string' },
  'optimizer-temperature': { type: 'string' },
  'optimizer-max-tokens': { type: 'string' },
  'optimizer-timeout': { type: 'string' },
  // The loop.
  rounds: { type: 'string' },
  candidates: { type: 'string' },
  margin: { type: 'string' },
  level: { type: 'string' },
  budget: { type: 'string' },
  seed: { type: 'string' },
  output: { type: 'string', short: 'o' },
  resume: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type OptimizeValues = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>['values'];

/** Options a resumed run must keep (they decide what is compared with what); the rest may change. */
const LOCKED = [
  'template',
  'text-for',
  'data',
  'domain',
  'n',
  'gen-seed',
  'eval-fraction',
  'split-seed',
  'dev',
  'test',
  'backend',
  'model',
  'max-tokens',
  'temperature',
  'top-p',
  'prefix-slots',
  'judge',
  'judge-model',
  'judge-max-tokens',
  'judge-temperature',
  'judge-prompts',
  'optimizer',
  'optimizer-model',
  'optimizer-temperature',
  'candidates',
  'margin',
  'level',
  'seed',
] as const;
/** What a locked option is when not given (the loop's, the data's and the optimizer's defaults). */
const DEFAULTS = {
  'eval-fraction': '1',
  'split-seed': '0',
  n: '12',
  'gen-seed': '0',
  dev: '8',
  test: '8',
  judge: 'local',
  optimizer: 'offline',
  'optimizer-temperature': '0.7',
  candidates: '3',
  margin: '0',
  level: '0.95',
  seed: '0',
} as const;
const dflt = (k: keyof typeof DEFAULTS): number => Number(DEFAULTS[k]);

/** Whether an option given on resume is the one the run has (or, not given then, its default): "0" is "00", "0.5" is ".5". */
function sameOption(k: string, now: string | boolean, was: string | boolean | undefined): boolean {
  const then = was ?? (DEFAULTS as Record<string, string>)[k];
  if (now === then) return true;
  const numeric = (v: unknown) => typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v));
  return numeric(now) && numeric(then) && Number(now) === Number(then);
}

/** Never written to DIR/run.json. */
const SECRET = ['api-key', 'judge-api-key', 'optimizer-api-key'] as const;
const NOT_STORED = new Set<string>([...SECRET, 'output', 'resume', 'help']);

export const RUN_FILE = 'run.json';
export const STATE_FILE = 'state.json';

/** The options to store in DIR/run.json (no keys, nothing about this invocation only). */
export function storedOptions(values: OptimizeValues): Record<string, string | boolean> {
  return Object.fromEntries(Object.entries(values).filter(([k, v]) => v !== undefined && !NOT_STORED.has(k))) as Record<string, string | boolean>;
}

/** The run DIR continues (its run.json), with the options given now merged over it; errors name what differs. */
export function resumeValues(dir: string, given: OptimizeValues): OptimizeValues {
  const file = join(dir, RUN_FILE);
  if (!existsSync(join(dir, STATE_FILE)) || !existsSync(file))
    throw new FileError(`${dir}: nothing to resume (no ${STATE_FILE} and ${RUN_FILE}; was it written by lwm optimize -o ${dir}?)`);
  let stored: Record<string, string | boolean>;
  try {
    const run = JSON.parse(readFileSync(file, 'utf8')) as { options?: Record<string, string | boolean> };
    if (!run || typeof run.options !== 'object' || run.options === null) throw new Error('no "options" object');
    stored = run.options;
  } catch (e) {
    throw new FileError(`${file}: cannot read the run's options (${(e as Error).message})`);
  }
  for (const k of LOCKED) {
    const now = given[k];
    if (now !== undefined && !sameOption(k, now, stored[k]))
      throw new UsageError(
        `--${k} ${JSON.stringify(now)} differs from the run being resumed in ${dir} (${stored[k] === undefined ? 'not given' : JSON.stringify(stored[k])}); a resumed run keeps its template, data, splits, simulator, judge, optimizer and seed`,
      );
  }
  const merged: Record<string, unknown> = { ...stored };
  for (const [k, v] of Object.entries(given)) if (v !== undefined) merged[k] = v;
  return merged as OptimizeValues;
}

export function numberOption(name: string, v: string, lo: number, hi: number): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < lo || n > hi)
    throw new UsageError(`--${name} must be a number from ${lo} to ${hi}, got ${JSON.stringify(v)}`);
  return n;
}

const int = (values: OptimizeValues, name: keyof OptimizeValues & string, dflt: number, min: number, max?: number): number => {
  const v = values[name];
  return v === undefined ? dflt : intOption(name, String(v), min, max);
};

/** The data source: a file, or the built-in environments. */
export type DataSource =
  | { kind: 'file'; file: string; evalFraction: number; splitSeed: number }
  | { kind: 'domain'; domains: string[]; n: number; seed: number };

function dataSource(values: OptimizeValues): DataSource {
  if (values.data !== undefined && values.domain !== undefined) throw new UsageError('give --data FILE or --domain D, not both');
  for (const f of ['n', 'gen-seed'] as const)
    if (values[f] !== undefined && values.domain === undefined) throw new UsageError(`--${f} is for --domain (the built-in environments)`);
  for (const f of ['eval-fraction', 'split-seed'] as const)
    if (values[f] !== undefined && values.data === undefined) throw new UsageError(`--${f} is for --data FILE (native trajectories)`);
  if (values.data !== undefined) {
    const problem = inputFileProblem(values.data);
    if (problem) throw new FileError(`${problem} (--data)`);
    return {
      kind: 'file',
      file: values.data,
      evalFraction: values['eval-fraction'] === undefined ? dflt('eval-fraction') : numberOption('eval-fraction', values['eval-fraction'], 0, 1),
      splitSeed: int(values, 'split-seed', dflt('split-seed'), 0, 0xffffffff),
    };
  }
  if (values.domain === undefined)
    throw new UsageError('the samples: give --data FILE (AgentWorldBench records or trajectories) or --domain D (built-in environments)');
  const domains = values.domain === 'all' ? [...DOMAINS] : values.domain.split(',').map((d) => d.trim());
  for (const d of domains)
    if (!(DOMAINS as readonly string[]).includes(d))
      throw new UsageError(`--domain: unknown domain ${JSON.stringify(d)}; expected one of ${DOMAINS.join(', ')} or all`);
  return { kind: 'domain', domains, n: int(values, 'n', dflt('n'), 1, 10_000), seed: int(values, 'gen-seed', dflt('gen-seed'), 0, 0xffffffff) };
}

export interface OptimizerArgs {
  kind: 'offline' | 'endpoint';
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  temperature: number;
  maxTokens: number;
  timeout: number;
}

function optimizerArgs(values: OptimizeValues): OptimizerArgs {
  const kind = values.optimizer ?? DEFAULTS.optimizer;
  if (kind !== 'offline' && kind !== 'endpoint') throw new UsageError(`--optimizer must be offline or endpoint, got ${JSON.stringify(kind)}`);
  const endpointOnly = [
    'optimizer-base-url',
    'optimizer-model',
    'optimizer-api-key',
    'optimizer-temperature',
    'optimizer-max-tokens',
    'optimizer-timeout',
  ] as const;
  if (kind === 'offline') for (const f of endpointOnly) if (values[f] !== undefined) throw new UsageError(`--${f} is for --optimizer endpoint`);
  if (kind === 'endpoint' && (!values['optimizer-base-url'] || !values['optimizer-model']))
    throw new UsageError('--optimizer endpoint needs --optimizer-base-url and --optimizer-model');
  if (values['optimizer-base-url'] !== undefined) {
    try {
      checkBaseUrl(values['optimizer-base-url']);
    } catch (e) {
      throw new UsageError((e as Error).message.replace('--base-url', '--optimizer-base-url'));
    }
  }
  return {
    kind,
    baseUrl: values['optimizer-base-url'],
    model: values['optimizer-model'],
    apiKey: values['optimizer-api-key'],
    temperature:
      values['optimizer-temperature'] === undefined
        ? dflt('optimizer-temperature')
        : numberOption('optimizer-temperature', values['optimizer-temperature'], 0, 2),
    maxTokens: int(values, 'optimizer-max-tokens', 4096, 1),
    timeout: int(values, 'optimizer-timeout', 300, 1),
  };
}

export interface OptimizeArgs {
  dir: string;
  resume: boolean;
  data: DataSource;
  optimizer: OptimizerArgs;
  devPerDomain: number;
  testPerDomain: number;
  rounds: number;
  candidates: number;
  margin: number;
  level: number;
  budget?: number;
  seed: number;
}

/** The loop's options, checked (the backend's and the judge's are checked by lwm infer's and lwm judge's own code). */
export function checkOptimizeArgs(values: OptimizeValues, positionals: string[]): OptimizeArgs {
  if (positionals.length)
    throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])} (the template is given with --template FILE, the samples with --data FILE)`);
  if (values.output === undefined || values.output === '') throw new UsageError('-o DIR is required: the folder the lineage and the run state are written to');
  if (values.template === undefined && !values.resume)
    throw new UsageError('--template FILE is required (a template JSON or text, or a built-in version: v0, v1, v2, compact)');
  if (values.backend === undefined)
    throw new UsageError('--backend is required (local, onnx, endpoint, copy-last or reference): the simulator the templates are scored with');
  const margin = values.margin === undefined ? dflt('margin') : numberOption('margin', values.margin, 0, 100);
  const level = values.level === undefined ? dflt('level') : numberOption('level', values.level, 0.5, 0.999);
  if (level === 0.5) throw new UsageError(`--level must be above 0.5, got ${JSON.stringify(values.level)}`);
  return {
    dir: values.output,
    resume: values.resume ?? false,
    data: dataSource(values),
    optimizer: optimizerArgs(values),
    devPerDomain: int(values, 'dev', dflt('dev'), 2, 100_000),
    testPerDomain: int(values, 'test', dflt('test'), 0, 100_000),
    rounds: int(values, 'rounds', 3, 1, 100),
    candidates: int(values, 'candidates', dflt('candidates'), 1, 20),
    margin,
    level,
    budget: values.budget === undefined ? undefined : intOption('budget', values.budget, 1),
    seed: int(values, 'seed', dflt('seed'), 0, 0xffffffff),
  };
}

/** The output folder: must not be a file; without --resume it must not hold a run already. */
export function checkOutputDir(dir: string, resume: boolean): void {
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
    if (!isDir) throw new FileError(`${dir}: cannot write the run there (not a directory) (-o)`);
  } catch (e) {
    if (e instanceof FileError) throw e;
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new FileError(`${dir}: cannot write the run there (${errnoText(e)}) (-o)`);
  }
  if (!resume && isDir && existsSync(join(dir, STATE_FILE)))
    throw new UsageError(`${dir} already holds an optimization run (${STATE_FILE}); add --resume to continue it, or choose another -o DIR`);
}

/** The starting template: a file (template JSON, old JSON template, or template text) or a built-in version; errors name the file and line. */
export function readStartTemplate(spec: string, textFor: string | undefined): { text: string; version: string; source: string } {
  let template: PromptTemplate;
  let source = spec;
  if (!existsSync(spec) && Object.hasOwn(BUILTIN_TEMPLATES, spec)) {
    template = BUILTIN_TEMPLATES[spec];
    source = `built-in ${spec}`;
  } else {
    const problem = inputFileProblem(spec);
    if (problem) throw new FileError(`${problem} (--template; built-in versions: ${Object.keys(BUILTIN_TEMPLATES).join(', ')})`);
    template = templateOfFile(spec, readFileSync(spec, 'utf8'));
  }
  if (textFor !== undefined && !template.domains?.[textFor])
    throw new UsageError(
      `--text-for ${JSON.stringify(textFor)}: ${source} has no text for that domain (it has: ${Object.keys(template.domains ?? {}).join(', ') || 'none'})`,
    );
  if (textFor === undefined && template.domains && Object.keys(template.domains).length)
    throw new UsageError(
      `${source} has per-domain texts (${Object.keys(template.domains).join(', ')}); the loop optimizes one text: pick one with --text-for DOMAIN (or strip "domains" to optimize the main text)`,
    );
  const text = textFor === undefined ? template.text : templateTextFor(template, textFor);
  const problems = checkTemplateText(text);
  if (problems.length) throw new FileError(problems.map((p) => `${source}${textFor ? ` (text for ${textFor})` : ''}: line ${p.line}: ${p.message}`).join('\n'));
  return { text, version: template.version, source };
}

/** A template file's template: JSON (the current shape or an old one) when it parses as a JSON object, else the text itself. */
function templateOfFile(file: string, raw: string): PromptTemplate {
  const body = raw.replace(/^\uFEFF/u, '');
  if (!/^\s*\{\s*"/u.test(body)) return { version: 'start', description: file, text: body, targetOpen: '', targetClose: '' };
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch (e) {
    throw new FileError(`${file}: looks like JSON but does not parse (${(e as Error).message}); a template text must not start with {"`);
  }
  if (isLegacyTemplate(v)) return normalizeTemplate(v);
  const o = v as Partial<PromptTemplate>;
  if (typeof o.text !== 'string') throw new FileError(`${file}: a template JSON needs a "text" string (the Jinja template; docs/templates.md)`);
  if (o.domains !== undefined && (typeof o.domains !== 'object' || o.domains === null || Object.values(o.domains).some((x) => typeof x !== 'string')))
    throw new FileError(`${file}: "domains" must map domain names to template texts`);
  return {
    version: typeof o.version === 'string' && o.version ? o.version : 'start',
    description: o.description ?? '',
    text: o.text,
    domains: o.domains,
    targetOpen: '',
    targetClose: '',
  };
}
