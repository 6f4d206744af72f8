// lwm gen --domain D|all --n N --seed S [-o FILE]: trajectories from the built-in environments,
// as native JSONL, byte-identical for the same arguments. With --tasks F[,F…]: task-play
// trajectories instead (a task's attempt, then its family's probe; docs/method.md §13).
import { DOMAINS, type KnownDomain } from '../../core/schema/types.ts';
import { generateTrajectory } from '../../envs/index.ts';
import { taskPlayFamilies, taskPlayTrajectory } from '../../envs/tasks/index.ts';
import { checkOutputPath, intOption, parseCommandArgs, UsageError, writeOutput, type CliIO } from '../io.ts';

/** Trajectories per domain at most: ids number them with five digits (env-D-S-00000). */
export const MAX_GEN_N = 100_000;

const HELP = `Usage: lwm gen --domain ${DOMAINS.join('|')}|all --n N --seed S [--tasks F[,F…]|probed] [-o FILE]   (N from 1 to ${MAX_GEN_N})
Runs the scripted agents in the built-in environments and writes one trajectory per line.
With --domain all, N trajectories are made for each of the seven domains.
With --tasks, N task-play trajectories of those task families of one domain (probed: every family
with a probe): a train-split task, the reference solver's attempt, a near miss or no action, then the
family's probe, the data a world model needs to reward simulated episodes (docs/method.md §13).
`;

export function parseInt10(name: string, v: string | undefined, min: number, max = 0xffffffff): number {
  if (v === undefined) throw new UsageError(`missing --${name}\n${HELP}`);
  return intOption(name, v, min, max);
}

export default async function gen(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    domain: { type: 'string' },
    n: { type: 'string' },
    seed: { type: 'string' },
    tasks: { type: 'string' },
    output: { type: 'string', short: 'o' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\n${HELP}`);
  const domain = values.domain;
  if (domain === undefined) throw new UsageError(`missing --domain\n${HELP}`);
  if (domain !== 'all' && !(DOMAINS as readonly string[]).includes(domain))
    throw new UsageError(`unknown domain '${domain}'; expected one of ${DOMAINS.join(', ')} or all`);
  const n = parseInt10('n', values.n, 1, MAX_GEN_N);
  const seed = parseInt10('seed', values.seed, 0);
  const domains: KnownDomain[] = domain === 'all' ? [...DOMAINS] : [domain as KnownDomain];
  if (values.output !== undefined) checkOutputPath(values.output);
  if (values.tasks !== undefined) {
    if (domain === 'all') throw new UsageError('--tasks needs one --domain: task families belong to one domain');
    let families: string[];
    try {
      families = taskPlayFamilies(domain as KnownDomain, values.tasks);
    } catch (e) {
      throw new UsageError(`--tasks: ${(e as Error).message}`);
    }
    const playLines = function* () {
      for (let i = 0; i < n; i++) yield JSON.stringify(taskPlayTrajectory(domain as KnownDomain, families, seed, i)) + '\n';
    };
    await writeOutput(io, values.output, playLines());
    if (values.output) io.err(`wrote ${n} task-play trajectories of ${families.join(', ')} to ${values.output}\n`);
    return 0;
  }
  // One trajectory at a time, so memory stays flat and a slow reader holds generation back.
  function* lines() {
    for (const d of domains) for (let i = 0; i < n; i++) yield JSON.stringify(generateTrajectory(d, seed, i)) + '\n';
  }
  await writeOutput(io, values.output, lines());
  if (values.output) io.err(`wrote ${n * domains.length} trajectories to ${values.output}\n`);
  return 0;
}
