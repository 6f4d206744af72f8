// Tokenizer benchmark: trains byte-level BPE on ~10 MB of generated agent-like text (shell
// sessions, JSON tool results, prose, a little non-Latin text) and prints the time per phase.
//   npx tsx scripts/bench-tokenizer.ts [--mb 10] [--vocab 4096] [--json FILE]
import { parseArgs } from 'node:util';
import { countPretokens, trainBpe } from '../src/core/tokenizer/index.ts';
import { seededRandom } from '../src/core/random.ts';

const { values } = parseArgs({ options: { mb: { type: 'string', default: '10' }, vocab: { type: 'string', default: '4096' }, json: { type: 'string' } } });
const targetBytes = Number(values.mb) * 1024 * 1024;
const vocabSize = Number(values.vocab);

const rand = seededRandom(1234);
const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
const syllables = ['ka', 'lo', 'mi', 'ren', 'tas', 'vu', 'zen', 'or', 'el', 'dra', 'qui', 'po', 'sha', 'nix', 'ber', 'tol'];
const word = () => Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(syllables)).join('');
const common = ['the', 'file', 'process', 'server', 'request', 'error', 'user', 'data', 'config', 'output', 'returned', 'with', 'and', 'for', 'from', 'status'];
const sentence = () => Array.from({ length: 6 + Math.floor(rand() * 12) }, () => (rand() < 0.6 ? pick(common) : word())).join(' ') + '.';
const path = () => '/' + Array.from({ length: 1 + Math.floor(rand() * 4) }, word).join('/') + pick(['.py', '.ts', '.json', '.txt', '']);
const generators = [
  () =>
    `$ ls -la ${path()}\n` +
    Array.from(
      { length: 4 },
      () => `-rw-r--r-- 1 user staff ${Math.floor(rand() * 99999)} Jan ${1 + Math.floor(rand() * 28)} 12:${10 + Math.floor(rand() * 49)} ${word()}.txt`,
    ).join('\n'),
  () => `$ cat ${path()}\n${sentence()} ${sentence()}`,
  () => JSON.stringify({ status: pick(['ok', 'error']), id: Math.floor(rand() * 1e6), name: word(), items: [word(), word()], count: Math.floor(rand() * 100) }),
  () => `${sentence()} ${sentence()} ${sentence()}`,
  () => `def ${word()}_${word()}(${word()}, ${word()}):\n    return ${word()} + ${Math.floor(rand() * 1000)}`,
  () => pick(['数据已保存到文件', 'ファイルを開きました', 'Datei wurde gelöscht', 'Ошибка: файл не найден', '✓ done 🎉']) + ` ${word()}`,
];

const t0 = performance.now();
const corpus: string[] = [];
let bytes = 0;
while (bytes < targetBytes) {
  const s = pick(generators)() + '\n';
  corpus.push(s);
  bytes += Buffer.byteLength(s);
}
const t1 = performance.now();
const distinct = countPretokens(corpus).size;
const t2 = performance.now();
const tok = trainBpe(corpus, { vocabSize });
const t3 = performance.now();
const sample = corpus.slice(0, 2000).join('');
const ids = tok.encode(sample);
const t4 = performance.now();
const roundTrip = tok.decode(ids) === sample;

console.log(
  `corpus      ${(bytes / 1048576).toFixed(1)} MiB, ${corpus.length} texts, ${distinct} distinct pre-tokens (generated in ${((t1 - t0) / 1000).toFixed(2)} s)`,
);
console.log(`count       ${((t2 - t1) / 1000).toFixed(2)} s  (pre-token counting alone)`);
console.log(`train       ${((t3 - t2) / 1000).toFixed(2)} s  to vocab ${tok.vocabSize} (${tok.merges.length} merges), counting included`);
console.log(
  `encode      ${(sample.length / 1024).toFixed(0)} KiB in ${(((t4 - t3) * 1000) / 1000).toFixed(0)} ms, ${(sample.length / ids.length).toFixed(2)} chars/token, round trip ${roundTrip ? 'exact' : 'BROKEN'}`,
);

// `--json FILE` (as `npm run bench -- --suite tokenizer` passes): the figures as JSON lines.
if (values.json) {
  const { appendFileSync } = await import('node:fs');
  const c = `${(bytes / 1048576).toFixed(0)}MiB-vocab${tok.vocabSize}`;
  for (const [metric, value, unit] of [
    ['train_s', (t3 - t2) / 1000, 's'],
    ['encode_chars_per_token', sample.length / ids.length, 'chars/token'],
  ] as const) {
    appendFileSync(values.json, JSON.stringify({ suite: 'tokenizer', case: c, engine: 'lwm-bpe', metric, value, unit }) + '\n');
  }
}
