// lwm gen --domain D|all --n N --seed S [-o FILE]: trajectories from the built-in environments,
// as native JSONL, byte-identical for the same arguments.
import { writeFileSync } from 'node:fs';
import { DOMAINS, type KnownDomain } from '../../core/schema/types.ts';
import { generateTrajectories, toJsonl } from '../../core/envs/index.ts';
import { parseCommandArgs, UsageError, type CliIO } from '../io.ts';

const HELP = `Usage: lwm gen --domain ${DOMAINS.join('|')}|all --n N --seed S [-o FILE]
Runs the scripted agents in the built-in environments and writes one trajectory per line.
With --domain all, N trajectories are made for each of the seven domains.
`;

export function parseInt10(name: string, v: string | undefined, min: number): number {
  if (v === undefined) throw new UsageError(`missing --${name}\n${HELP}`);
  if (!/^-?\d+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v))) throw new UsageError(`--${name} must be an integer >= ${min}, got '${v}'`);
  return Number(v);
}

export default async function gen(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    domain: { type: 'string' },
    n: { type: 'string' },
    seed: { type: 'string' },
    output: { type: 'string', short: 'o' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) { io.out(HELP); return 0; }
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\n${HELP}`);
  const domain = values.domain;
  if (domain === undefined) throw new UsageError(`missing --domain\n${HELP}`);
  if (domain !== 'all' && !(DOMAINS as readonly string[]).includes(domain)) throw new UsageError(`unknown domain '${domain}'; expected one of ${DOMAINS.join(', ')} or all`);
  const n = parseInt10('n', values.n, 1);
  const seed = parseInt10('seed', values.seed, 0);
  const domains: KnownDomain[] = domain === 'all' ? [...DOMAINS] : [domain as KnownDomain];
  const text = domains.map((d) => toJsonl(generateTrajectories(d, n, seed))).join('');
  if (values.output) {
    writeFileSync(values.output, text);
    io.err(`wrote ${n * domains.length} trajectories to ${values.output}\n`);
  } else io.out(text);
  return 0;
}
