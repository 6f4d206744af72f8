// `lwm tokenizer train FILE --vocab N -o OUT`: trains a byte-level BPE tokenizer and saves it as
// JSON. A trajectory file (.json/.jsonl in any supported format) is rendered with the CPT
// template first, so the merges fit what training will see; any other file (or --text) is read
// as plain text.
import { createReadStream } from 'node:fs';
import type { CliIO } from '../io.ts';
import { checkOutputPath, inputFileProblem, parseCommandArgs, UsageError, writeOutput } from '../io.ts';
import { MAX_VOCAB, MIN_VOCAB, trainBpe } from '../../core/tokenizer/index.ts';
import { BUILTIN_TEMPLATES, renderTrajectory } from '../../core/templates/index.ts';
import { readLines } from '../../core/formats/lines.ts';
import { IMPORT_OPTIONS, importFormat, loadFile } from './validate.ts';

const USAGE = `lwm tokenizer train FILE --vocab N -o OUT [--text] [--format F]   (N from ${MIN_VOCAB} to ${MAX_VOCAB})`;

export default async function tokenizer(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    ...IMPORT_OPTIONS,
    vocab: { type: 'string' },
    out: { type: 'string', short: 'o' },
    text: { type: 'boolean' },
  });
  if (values.help) {
    io.out(`usage: ${USAGE}\n`);
    return 0;
  }
  const [sub, file, ...rest] = positionals;
  if (sub !== 'train') throw new UsageError(`expected the subcommand 'train'\nusage: ${USAGE}`);
  if (!file || rest.length) throw new UsageError(`expected one FILE\nusage: ${USAGE}`);
  if (!values.out) throw new UsageError(`-o OUT is required\nusage: ${USAGE}`);
  const vocab = Number(values.vocab);
  if (values.vocab === undefined || !Number.isInteger(vocab) || vocab < MIN_VOCAB || vocab > MAX_VOCAB) {
    throw new UsageError(`--vocab must be an integer from ${MIN_VOCAB} (256 bytes + special tokens) to ${MAX_VOCAB}, got '${values.vocab ?? ''}'`);
  }
  checkOutputPath(values.out);
  const started = performance.now();
  let corpus: string[];
  let errors = 0;
  if (!values.text && /\.jsonl?$/i.test(file)) {
    const r = await loadFile(io, file, { format: importFormat(values.format), domain: values.domain, keepRaw: false });
    if (!r.readable) return 1;
    errors = r.errorCount;
    corpus = r.trajectories.map((t) => renderTrajectory(BUILTIN_TEMPLATES.v0, t));
  } else {
    corpus = [];
    const problem = inputFileProblem(file);
    if (problem) {
      io.err(problem + '\n');
      return 1;
    }
    try {
      for await (const l of readLines(createReadStream(file))) {
        if (l.text === null) {
          io.err(`${file}:${l.line}: not valid UTF-8 text (save the file as UTF-8)\n`);
          errors++;
        } else corpus.push(l.text + '\n');
      }
    } catch (e) {
      io.err(`${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
      return 1;
    }
  }
  const tok = trainBpe(corpus, { vocabSize: vocab });
  await writeOutput(io, values.out, JSON.stringify(tok.toJSON()) + '\n');
  const seconds = (performance.now() - started) / 1000;
  io.out(`${values.out}: vocabulary ${tok.vocabSize} (${tok.merges.length} merges) from ${corpus.length} texts in ${seconds.toFixed(2)} s\n`);
  if (tok.vocabSize < vocab) io.err(`${file}: the corpus ran out of pairs to merge at ${tok.vocabSize} < ${vocab}\n`);
  return errors ? 1 : 0;
}
