import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../main.ts';
import { Tokenizer } from '../../core/tokenizer/index.ts';
import { captureIO } from '../testing.ts';

const fx = (name: string) => fileURLToPath(new URL(`../../core/formats/fixtures/${name}`, import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'lwm-cli-'));
async function run(...argv: string[]) {
  const io = captureIO();
  const code = await main(argv, io);
  return { code, out: io.stdout, err: io.stderr };
}

describe('lwm validate', () => {
  it('exits 0 on a clean file and summarises it', async () => {
    const r = await run('validate', fx('native/trajectories.jsonl'));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/3 trajectories, 8 turns, format native, 0 errors/);
    expect(r.err).toBe('');
  });
  it('exits 1 and lists errors one per line as file:line: message', async () => {
    const r = await run('validate', fx('native/malformed.jsonl'));
    expect(r.code).toBe(1);
    const lines = r.err.trim().split('\n');
    expect(lines).toHaveLength(6);
    for (const l of lines) expect(l).toMatch(/malformed\.jsonl:\d+: /);
  });
  it('reports duplicate ids across the file', async () => {
    const f = join(tmp, 'dup.jsonl');
    const line = readFileSync(fx('native/trajectories.jsonl'), 'utf8').split('\n')[1];
    writeFileSync(f, `${line}\n${line}\n`);
    const r = await run('validate', f, '--json');
    expect(r.code).toBe(1);
    expect(r.err).toBe(`${f}:2: /id: duplicate trajectory id "term-0002": this copy (${f}:2) is left out, the id was first seen at ${f}:1\n`);
    expect(JSON.parse(r.out)).toMatchObject({ trajectories: 1, errors: 1, valid: false });
  });
  it('lwm expand keeps one copy of a repeated id: no id in both splits, one RL turn per id', async () => {
    const f = join(tmp, 'dup-expand.jsonl');
    const t = JSON.parse(readFileSync(fx('native/trajectories.jsonl'), 'utf8').split('\n')[0]);
    const lines = Array.from({ length: 10 }, () => JSON.stringify(t));
    writeFileSync(f, lines.join('\n') + '\n');
    const r = await run('expand', f, '--json', '--eval-fraction', '0.5');
    expect(r.code).toBe(1);
    expect(r.err.trim().split('\n')).toHaveLength(9);
    const s = JSON.parse(r.out);
    expect(s).toMatchObject({ trajectories: 1, errors: 9 });
    expect(s.train.trajectories + s.eval.trajectories).toBe(1);
    expect(s.rlPool).toBeLessThanOrEqual(1);
  });
  it('exits 1 on a missing file and 2 on usage errors', async () => {
    expect((await run('validate', join(tmp, 'nope.jsonl'))).code).toBe(1);
    expect((await run('validate', 'a', 'b')).code).toBe(2);
    expect((await run('validate', 'a', 'b')).code).toBe(2);
    expect((await run('validate', fx('empty.jsonl'), '--format', 'csv')).code).toBe(2);
    expect((await run('validate', fx('empty.jsonl'), '--bogus')).code).toBe(2);
  });
  it('validates the built-in default dataset when given no FILE', async () => {
    const r = await run('validate', '--json');
    expect(r.code).toBe(0);
    expect(r.err).toContain('built-in default dataset');
    expect(JSON.parse(r.out)).toMatchObject({ valid: true, errors: 0 });
    expect(JSON.parse(r.out).trajectories).toBeGreaterThanOrEqual(1400);
  });
  it('honours a forced format', async () => {
    const r = await run('validate', fx('openai/chat.jsonl'), '--format', 'native');
    expect(r.code).toBe(1);
    expect(r.err).toContain('/id: missing required field');
  });
});

describe('lwm convert', () => {
  it('round-trips AgentWorldBench byte for byte', async () => {
    const r = await run('convert', fx('agentworldbench/terminal_test.jsonl'), '--to', 'agentworldbench');
    expect(r.code).toBe(0);
    expect(r.out).toBe(readFileSync(fx('agentworldbench/terminal_test.jsonl'), 'utf8'));
  });
  it('writes TRL / verl SFT and RL files', async () => {
    const out = join(tmp, 'sft.jsonl');
    const r = await run('convert', fx('sharegpt/tools.jsonl'), '--to', 'trl', '-o', out);
    expect(r.code).toBe(0);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(3);
    expect(rows[0].completion[0].role).toBe('assistant');
    const rl = await run('convert', fx('native/trajectories.jsonl'), '--to', 'verl', '--kind', 'rl', '--seed', '4');
    expect(
      rl.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).extra_info.trajectory_id),
    ).toEqual(['term-0001', 'term-0002', 'os-0003']);
  });
  it('writes verl Parquet for -o *.parquet, JSON lines for *.jsonl, and refuses anything else', async () => {
    const { parquetReadObjects } = await import('hyparquet');
    const pq = join(tmp, 'rl.parquet');
    const r = await run('convert', fx('native/trajectories.jsonl'), '--to', 'verl', '--kind', 'rl', '-o', pq);
    expect(r.code).toBe(0);
    expect(r.err).toContain('wrote 3 verl Parquet rows');
    const bytes = readFileSync(pq);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('PAR1');
    const rows = await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer });
    expect(rows.map((x) => (x.extra_info as { trajectory_id: string }).trajectory_id)).toEqual(['term-0001', 'term-0002', 'os-0003']);
    const jl = join(tmp, 'mt.jsonl');
    expect((await run('convert', fx('native/trajectories.jsonl'), '--to', 'verl', '--kind', 'multiturn', '-o', jl)).code).toBe(0);
    expect(
      readFileSync(jl, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).extra_info.turns),
    ).toEqual([5, 1, 2]);
    for (const bad of [
      ['verl', 'x.csv'],
      ['verl', 'x.json'],
      ['trl', 'x.parquet'],
      ['native', 'x.parquet'],
    ]) {
      const b = await run('convert', fx('native/trajectories.jsonl'), '--to', bad[0], '-o', join(tmp, bad[1]));
      expect(b.code).toBe(2);
      expect(b.err).toMatch(/\.parquet|Parquet/);
    }
    expect((await run('convert', fx('native/trajectories.jsonl'), '--to', 'trl', '--kind', 'multiturn')).code).toBe(2);
  });
  it('converts what imports, lists the rest and exits 1', async () => {
    const r = await run('convert', fx('openai/malformed.jsonl'), '--to', 'native');
    expect(r.code).toBe(1);
    expect(r.out.trim().split('\n')).toHaveLength(1);
    expect(r.err.trim().split('\n')).toHaveLength(4);
  });
  it('rejects bad options with exit 2', async () => {
    expect((await run('convert', fx('empty.jsonl'))).code).toBe(2);
    expect((await run('convert', fx('empty.jsonl'), '--to', 'csv')).code).toBe(2);
    expect((await run('convert', fx('empty.jsonl'), '--to', 'native', '--kind', 'rl')).code).toBe(2);
    expect((await run('convert', fx('empty.jsonl'), '--to', 'trl', '--seed', '-1')).code).toBe(2);
  });
});

describe('lwm expand', () => {
  it('prints counts per split and the RL pool; --json gives one document', async () => {
    const r = await run('expand', fx('native/trajectories.jsonl'), '--seed', '1', '--eval-fraction', '0.34', '--json');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.train.trajectories + j.eval.trajectories).toBe(3);
    expect(j.eval.trajectories).toBe(1);
    expect(j.rlPool).toBe(2);
    const text = await run('expand', fx('native/trajectories.jsonl'));
    expect(text.out).toMatch(/RL pool: \d+ turns/);
    expect((await run('expand', fx('empty.jsonl'), '--eval-fraction', '2')).code).toBe(2);
  });
});

describe('lwm mask', () => {
  it('prints the category table per domain', async () => {
    const r = await run('mask', fx('native/trajectories.jsonl'));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^domain\s+turns\s+retrieval/);
    expect(r.out).toMatch(/\nos\s+2/);
    expect(r.out).toMatch(/\nall\s+8/);
  });
  it('takes settings and emits JSON with histograms', async () => {
    const r = await run('mask', fx('native/trajectories.jsonl'), '--json', '--set', 'ratios.action=0.3', '--set', 'actionMaxWords=0');
    const j = JSON.parse(r.out);
    expect(j.config.ratios.action).toBe(0.3);
    expect(j.overall.counts.action).toBe(0);
    expect(j.histograms.r.counts.reduce((a: number, b: number) => a + b, 0)).toBe(8);
    expect((await run('mask', fx('empty.jsonl'), '--set', 'nope=1')).code).toBe(2);
    expect((await run('mask', fx('empty.jsonl'), '--set', 'echoMinJaccard=7')).code).toBe(2);
    expect((await run('mask', fx('empty.jsonl'), '--set', 'ratios.other=abc')).code).toBe(2);
  });
  it('writes its configuration to a file that --config and lwm train --mask-config read', async () => {
    const cfg = join(tmp, 'mask.json');
    const w = await run('mask', fx('native/trajectories.jsonl'), '--json', '--set', 'ratios.action=0.3', '--set', 'echoMinJaccard=0.4', '--write-config', cfg);
    expect(w.code).toBe(0);
    const written = JSON.parse(readFileSync(cfg, 'utf8'));
    expect(written).toMatchObject({ format: 'lwm-mask-config/1', echoMinJaccard: 0.4, ratios: { action: 0.3, echo: 0.05 } });
    const r = await run('mask', fx('native/trajectories.jsonl'), '--json', '--config', cfg);
    expect(JSON.parse(r.out).config).toEqual(JSON.parse(w.out).config);
    // --set applies over the file.
    expect(
      JSON.parse((await run('mask', fx('native/trajectories.jsonl'), '--json', '--config', cfg, '--set', 'ratios.action=0.5')).out).config.ratios.action,
    ).toBe(0.5);
  });
  it('refuses a bad configuration file naming the file and the field', async () => {
    const bad = join(tmp, 'bad-mask.json');
    writeFileSync(bad, '{"ratios": {"echo": 1.5}}');
    const r = await run('mask', fx('native/trajectories.jsonl'), '--config', bad);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`${bad}: ratios.echo: must be a number in [0, 1], got 1.5\n`);
    // lwm train reads the same file before it loads data or looks for a GPU.
    const t = await run('train', '--stage', 'sft', '--data', fx('native/trajectories.jsonl'), '--mask-config', bad);
    expect(t.code).toBe(1);
    expect(t.err).toBe(`${bad}: ratios.echo: must be a number in [0, 1], got 1.5\n`);
    expect((await run('mask', fx('native/trajectories.jsonl'), '--config', join(tmp, 'absent.json'))).err).toMatch(
      /absent\.json: cannot read the mask configuration \(ENOENT\)/,
    );
  });
});

describe('lwm train --temperature', () => {
  it('refuses an RL rollout temperature that is not above 0, before it loads data or looks for a GPU', async () => {
    for (const t of ['0', '-0.5', 'warm']) {
      const r = await run('train', '--stage', 'rl', `--temperature=${t}`, '--data', fx('native/trajectories.jsonl'));
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/--temperature must be a number above 0/);
    }
  });
});

describe('lwm tokenizer', () => {
  it('trains from trajectories and from plain text, and the saved JSON loads', async () => {
    const out = join(tmp, 'tok.json');
    const r = await run('tokenizer', 'train', fx('native/hundred-turns.jsonl'), '--vocab', '320', '-o', out);
    expect(r.code).toBe(0);
    const tok = Tokenizer.fromJSON(JSON.parse(readFileSync(out, 'utf8')));
    expect(tok.vocabSize).toBe(320);
    const txt = join(tmp, 'corpus.txt');
    writeFileSync(txt, 'hello world\n'.repeat(50) + 'grüße 🌍\n');
    const t2 = await run('tokenizer', 'train', txt, '--vocab', '270', '-o', join(tmp, 'tok2.json'));
    expect(t2.code).toBe(0);
    expect(t2.out).toMatch(/vocabulary 270/);
  });
  it('rejects bad arguments with exit 2', async () => {
    expect((await run('tokenizer', 'fit', 'x', '--vocab', '300', '-o', 'y')).code).toBe(2);
    expect((await run('tokenizer', 'train', 'x', '--vocab', '100', '-o', 'y')).code).toBe(2);
    expect((await run('tokenizer', 'train', 'x', '--vocab', '300')).code).toBe(2);
    expect((await run('tokenizer', 'train', join(tmp, 'missing.txt'), '--vocab', '300', '-o', join(tmp, 'z.json'))).code).toBe(1);
  });
});
