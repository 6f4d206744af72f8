// Data safety and hostile input across the CLI: atomic outputs, output-path faults, closed pipes,
// scores that cannot be scores, terminal escapes in data, credentials, odd input files.
import { describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../main.ts';
import { captureIO } from '../testing.ts';
import { escapeControl, redactCredentials, writeOutput } from '../io.ts';

const fx = (name: string) => fileURLToPath(new URL(`../../core/formats/fixtures/${name}`, import.meta.url));
const BIN = fileURLToPath(new URL('../../../bin/lwm.mjs', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'lwm-safety-'));
async function run(...argv: string[]) {
  const io = captureIO();
  const code = await main(argv, io);
  return { code, out: io.stdout, err: io.stderr };
}
/** Files in `dir` other than `keep`: temp files left behind would show up here. */
const leftovers = (dir: string, ...keep: string[]) => readdirSync(dir).filter((f) => !keep.includes(f));

describe('outputs are atomic', () => {
  it('a conversion that fails leaves a good -o file as it was', async () => {
    const dir = mkdtempSync(join(tmp, 'conv-'));
    const good = join(dir, 'good.jsonl');
    const before = readFileSync(fx('native/trajectories.jsonl'), 'utf8');
    writeFileSync(good, before);
    const bin = join(dir, 'binary.bin');
    writeFileSync(bin, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 97 + 13) & 0xff)));
    const r = await run('convert', bin, '--to', 'native', '-o', good);
    expect(r.code).toBe(1);
    expect(readFileSync(good, 'utf8')).toBe(before);
    expect(leftovers(dir, 'good.jsonl', 'binary.bin')).toEqual([]);
  });

  it('convert F -o F rewrites F from its own contents', async () => {
    const dir = mkdtempSync(join(tmp, 'self-'));
    const f = join(dir, 'f.jsonl');
    writeFileSync(f, readFileSync(fx('native/trajectories.jsonl')));
    const expected = (await run('convert', f, '--to', 'native')).out;
    const r = await run('convert', f, '--to', 'native', '-o', f);
    expect(r.code).toBe(0);
    expect(readFileSync(f, 'utf8')).toBe(expected);
    expect(expected.trim().split('\n')).toHaveLength(3);
    expect(leftovers(dir, 'f.jsonl')).toEqual([]);
  });

  it('a convert whose input has an error writes no -o: F -o F keeps F whole, another -o is left as it was', async () => {
    const dir = mkdtempSync(join(tmp, 'bad-middle-'));
    const f = join(dir, 'f.jsonl');
    const [a, b, c] = readFileSync(fx('native/trajectories.jsonl'), 'utf8').trim().split('\n');
    const before = `${a}\n${b}\n{"id": "broken"\n${c}\n`;
    writeFileSync(f, before);
    const self = await run('convert', f, '--to', 'native', '-o', f);
    expect(self.code).toBe(1);
    expect(self.err).toMatch(/f\.jsonl:3: not valid JSON/);
    expect(self.err).toContain(`${f}: left as it was (1 error in ${f}; nothing written: without -o the records that convert go to standard output)`);
    expect(readFileSync(f, 'utf8')).toBe(before);
    const other = join(dir, 'other.jsonl');
    writeFileSync(other, 'previous\n');
    expect((await run('convert', f, '--to', 'trl', '-o', other)).code).toBe(1);
    expect(readFileSync(other, 'utf8')).toBe('previous\n');
    expect((await run('convert', f, '--to', 'native', '-o', join(dir, 'new.jsonl'))).code).toBe(1);
    expect(existsSync(join(dir, 'new.jsonl'))).toBe(false);
    // Standard output still gets the records that convert, with exit 1.
    const out = await run('convert', f, '--to', 'native');
    expect(out.code).toBe(1);
    expect(out.out.trim().split('\n')).toHaveLength(3);
    expect(leftovers(dir, 'f.jsonl', 'other.jsonl')).toEqual([]);
  });

  it('an -o that is a symbolic link replaces the file it points to and keeps the link', async () => {
    const dir = mkdtempSync(join(tmp, 'link-'));
    writeFileSync(join(dir, 'real.jsonl'), 'old\n');
    symlinkSync('real.jsonl', join(dir, 'link.jsonl'));
    expect((await run('gen', '--domain', 'os', '--n', '1', '--seed', '1', '-o', join(dir, 'link.jsonl'))).code).toBe(0);
    expect(lstatSync(join(dir, 'link.jsonl')).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'real.jsonl'), 'utf8')).domain).toBe('os');
  });

  it('a producer that throws half-way replaces nothing and leaves no temp file', async () => {
    const dir = mkdtempSync(join(tmp, 'throw-'));
    const f = join(dir, 'out.jsonl');
    writeFileSync(f, 'precious\n');
    function* lines() {
      yield 'a\n'.repeat(100_000);
      throw new Error('crash mid-export');
    }
    await expect(writeOutput(captureIO(), f, lines())).rejects.toThrow('crash mid-export');
    expect(readFileSync(f, 'utf8')).toBe('precious\n');
    expect(leftovers(dir, 'out.jsonl')).toEqual([]);
  });

  it('an -o that is a missing folder, a folder or a full device is one line and exit 1', async () => {
    const cases: [string[], RegExp][] = [
      [['gen', '--domain', 'os', '--n', '1', '--seed', '1', '-o', join(tmp, 'no/such/dir/x.jsonl')], /no such directory/],
      [['gen', '--domain', 'os', '--n', '1', '--seed', '1', '-o', tmp], /EISDIR/],
      [['convert', fx('native/trajectories.jsonl'), '--to', 'trl', '-o', join(tmp, 'nope', 'x.jsonl')], /no such directory/],
      [['judge', fx('native/trajectories.jsonl'), '-o', tmp], /EISDIR/],
      [['tokenizer', 'train', fx('native/trajectories.jsonl'), '--vocab', '300', '-o', join(tmp, 'nope', 't.json')], /no such directory/],
    ];
    if (existsSync('/dev/full')) cases.push([['gen', '--domain', 'os', '--n', '1', '--seed', '1', '-o', '/dev/full'], /ENOSPC/]);
    for (const [argv, why] of cases) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).toBe(1);
      expect(r.err.trim().split('\n'), argv.join(' ')).toHaveLength(1);
      expect(r.err).toMatch(why);
    }
  });

  it('stdout output waits for the reader (back-pressure) between records', async () => {
    const io = captureIO();
    let drains = 0;
    io.drain = () => new Promise<void>((resolve) => setImmediate(() => (drains++, resolve())));
    expect(await main(['gen', '--domain', 'os', '--n', '5', '--seed', '1'], io)).toBe(0);
    expect(io.stdout.trim().split('\n')).toHaveLength(5);
    expect(drains).toBeGreaterThanOrEqual(5);
  });

  it('a closed pipe on stdout ends quietly, and SIGTERM leaves no temp file', async () => {
    // `lwm gen ... | head -c 1`: the reader goes away after the first bytes.
    const child = spawn(process.execPath, [BIN, 'gen', '--domain', 'all', '--n', '400', '--seed', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(stderr).toBe('');
    expect(code).toBe(0);

    const dir = mkdtempSync(join(tmp, 'term-'));
    const good = join(dir, 'good.jsonl');
    writeFileSync(good, 'precious\n');
    const gen = spawn(process.execPath, [BIN, 'gen', '--domain', 'all', '--n', '100000', '--seed', '1', '-o', good], { stdio: 'ignore' });
    // Kill it once the temp file exists, i.e. mid-write.
    const t0 = Date.now();
    while (leftovers(dir, 'good.jsonl').length === 0 && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 50));
    expect(leftovers(dir, 'good.jsonl')).toHaveLength(1);
    gen.kill('SIGTERM');
    await new Promise((resolve) => gen.on('close', resolve));
    expect(readFileSync(good, 'utf8')).toBe('precious\n');
    expect(leftovers(dir, 'good.jsonl')).toEqual([]);
  }, 60_000);
});

describe('values that cannot be scores', () => {
  const rec = (scores: Record<string, unknown>) =>
    JSON.stringify({
      task: 'os',
      id: 'a',
      turn_idx: 1,
      prompt: ['ls'],
      response: ['x'],
      gen: 'x',
      failed: false,
      format: 3,
      factuality: 3,
      consistency: 3,
      realism: 3,
      quality: 3,
      total_score: 3,
      ...scores,
    });
  it('lwm score rejects 6, -100 and 1e308 at file:line: /field, and keeps 0 as "no score"', async () => {
    const f = join(tmp, 'scores.jsonl');
    writeFileSync(
      f,
      [rec({ format: 0, total_score: 3 }), rec({ format: 6 }), rec({ factuality: -100 }), rec({ total_score: 1e308 }), rec({ realism: 0.5 })].join('\n') + '\n',
    );
    const r = await run('score', f);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    const lines = r.err.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/scores\.jsonl:2: \/format: 6 is not a score/),
      expect.stringMatching(/scores\.jsonl:3: \/factuality: -100 is not a score/),
      expect.stringMatching(/scores\.jsonl:4: \/total_score: 1e\+308 is not a score/),
      expect.stringMatching(/scores\.jsonl:5: \/realism: 0\.5 is not a score/),
    ]);
    writeFileSync(f, rec({ format: 0 }) + '\n');
    expect((await run('score', f)).code).toBe(0);
    // Elsewhere in a record too: judge would write it back as null.
    writeFileSync(f, rec({ meta: { weight: 1 } }).replace('"weight":1', '"weight":-1e400') + '\n');
    const j = await run('judge', f);
    expect(j.code).toBe(1);
    expect(j.err).toMatch(/scores\.jsonl:1: \/meta\/weight: number out of range/);
  });
  it('lwm validate rejects 1e400 (Infinity once parsed) instead of writing null later', async () => {
    const line = readFileSync(fx('native/trajectories.jsonl'), 'utf8').split('\n')[0];
    const t = JSON.parse(line);
    t.metadata = { ...(t.metadata ?? {}), weight: 1 };
    const f = join(tmp, 'inf.jsonl');
    writeFileSync(f, JSON.stringify(t).replace('"weight":1', '"weight":1e400') + '\n');
    const r = await run('validate', f);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/inf\.jsonl:1: \/metadata\/weight: number out of range/);
  });
});

describe('terminal safety', () => {
  const hostile = '\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e';
  it('escapes control characters from the data in errors and tables', async () => {
    const line = readFileSync(fx('native/trajectories.jsonl'), 'utf8').split('\n')[0];
    const t = JSON.parse(line);
    const f = join(tmp, 'ctl.jsonl');
    writeFileSync(
      f,
      JSON.stringify({ ...t, domain: `x${hostile}` }) +
        '\n' +
        JSON.stringify({ ...t, id: 'other', turns: [{ ...t.turns[0], metadata: { timestamp: hostile } }] }) +
        '\n',
    );
    for (const argv of [
      ['validate', f],
      ['expand', f],
      ['mask', f],
    ]) {
      const r = await run(...argv);
      const all = r.out + r.err;
      expect(all, argv[0]).toContain('\\u001b]0;pwned\\u0007');
      expect(all, argv[0]).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]/);
    }
  });
  it('escapeControl keeps text, newlines and tabs, and JSON stays the same JSON', () => {
    expect(escapeControl('a\tb\nc é 🌍')).toBe('a\tb\nc é 🌍');
    const json = JSON.stringify({ s: `x\x7f\x85${hostile}` });
    expect(JSON.parse(escapeControl(json))).toEqual(JSON.parse(json));
  });
  it('never echoes credentials of a base URL', async () => {
    expect(redactCredentials('fetch http://alice:s3cret@host:8000/v1 failed')).toBe('fetch http://***@host:8000/v1 failed');
    expect(redactCredentials('at https://u:p@ss@example.com/x and mailto:a@b.c')).toBe('at https://***@example.com/x and mailto:a@b.c');
    // Linear on hostile text: long dotted runs with an @ at the end.
    const t0 = performance.now();
    redactCredentials('a.'.repeat(200_000) + '@');
    expect(performance.now() - t0).toBeLessThan(2000);
    const r = await run('judge', fx('native/trajectories.jsonl'), '--judge', 'endpoint', '--model', 'm', '--base-url', 'http://alice:s3cret@127.0.0.1:9/v1');
    expect(r.code).toBe(2);
    expect(r.err).not.toContain('s3cret');
    expect(r.err).toMatch(/user name or password/);
  });
});

describe('other inputs', () => {
  it('bounds gen --n, and rejects empty or non-decimal integers with exit 2', async () => {
    for (const argv of [
      ['gen', '--domain', 'os', '--n', '100001', '--seed', '1'],
      ['gen', '--domain', 'os', '--n', '1e3', '--seed', '1'],
      ['gen', '--domain', 'os', '--n', '1', '--seed', ''],
      ['convert', fx('empty.jsonl'), '--to', 'native', '--seed', ''],
      ['expand', fx('empty.jsonl'), '--seed', ''],
      ['expand', fx('empty.jsonl'), '--seed', ' '],
      ['judge', fx('empty.jsonl'), '--retries', ''],
      ['train', '--stage', 'cpt', '--seed', ''],
    ]) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err, argv.join(' ')).toMatch(/must be an integer from/);
    }
  });
  it("refuses an empty --eval-fraction (Number('') is 0)", async () => {
    const r = await run('expand', fx('empty.jsonl'), '--eval-fraction', '');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--eval-fraction must be a number/);
  });
  it('refuses a FIFO or /dev/zero as FILE at once, with exit 1', async () => {
    const fifo = join(tmp, 'fifo');
    execFileSync('mkfifo', [fifo]);
    for (const argv of [
      ['validate', fifo],
      ['score', fifo],
      ['validate', '/dev/zero'],
      ['judge', '/dev/zero'],
      ['tokenizer', 'train', '/dev/zero', '--vocab', '300', '-o', join(tmp, 't.json')],
    ]) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).toBe(1);
      expect(r.err, argv.join(' ')).toMatch(/not a regular file but a (FIFO|character device)/);
    }
  });
  it('refuses file: and javascript: base URLs as usage errors', async () => {
    for (const url of ['file:///etc/passwd', 'javascript:alert(1)', 'data:text/plain,x', 'not a url']) {
      const r = await run('judge', fx('empty.jsonl'), '--judge', 'endpoint', '--model', 'm', '--base-url', url);
      expect(r.code, url).toBe(2);
      expect(r.err, url).toMatch(/--base-url must be/);
    }
  });
});
