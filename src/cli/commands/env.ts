// lwm env DOMAIN --seed S: play a built-in environment over stdin/stdout. The first line is the
// system prompt as JSON; then each input line is one action and each output line one
// {"observation": ..., "spans": [...]} object.
import { DOMAINS, type KnownDomain } from '../../core/schema/types.ts';
import { createEnv } from '../../envs/index.ts';
import { parseCommandArgs, UsageError, type CliIO } from '../io.ts';
import { parseInt10 } from './gen.ts';

const HELP = `Usage: lwm env ${DOMAINS.join('|')} --seed S
Prints the system-prompt fields as one JSON line, then reads one action per line on stdin and
prints one JSON line per action: {"observation": ..., "spans": [...]}.
`;

export default async function env(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { seed: { type: 'string' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`expected exactly one DOMAIN\n${HELP}`);
  const domain = positionals[0];
  if (!(DOMAINS as readonly string[]).includes(domain)) throw new UsageError(`unknown domain '${domain}'; expected one of ${DOMAINS.join(', ')}`);
  const seed = parseInt10('seed', values.seed, 0);
  const e = createEnv(domain as KnownDomain);
  const { system_prompt } = e.reset(seed);
  io.out(JSON.stringify(system_prompt) + '\n');
  for await (const line of io.stdinLines()) {
    const r = e.step(line);
    io.out(JSON.stringify({ observation: r.observation, spans: r.spans }) + '\n');
  }
  return 0;
}
