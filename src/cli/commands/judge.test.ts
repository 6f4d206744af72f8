import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import judge from './judge.ts';
import score from './score.ts';
import { UsageError } from '../io.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureIO } from '../testing.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => (tmp = await tempDir()));
afterEach(async () => tmp.done());

let server: Server;
let base: string;
let calls = 0;
const bodies: Record<string, unknown>[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    calls++;
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      bodies.push(JSON.parse(raw));
      if (req.headers.authorization === 'Bearer mute') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        return res.end(JSON.stringify({ choices: [{ message: { content: 'I will not grade this.' } }] }));
      }
      if (req.headers.authorization !== 'Bearer k') {
        res.writeHead(401);
        return res.end('{"error": {"message": "bad key"}}');
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          choices: [{ message: { content: '<verdict>{"scores": {"format": 4, "factuality": 3, "consistency": 5, "realism": 4, "quality": 4}}</verdict>' } }],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const PRED = [
  {
    task: 'terminal',
    id: 'a',
    turn_idx: 1,
    prompt: ['### Turn 1\n**Action:**\necho hi'],
    response: ['**Environment Observation:**\nhi'],
    gen: '<predicted_observation>hi</predicted_observation>',
  },
  { task: 'terminal', id: 'b', turn_idx: 1, prompt: ['ls'], response: ['a.txt b.txt'], gen: '' },
];

describe('lwm judge', () => {
  it('judges with the local rubric and writes judged records that lwm score reads', async () => {
    await writeFile(tmp.path('p.jsonl'), PRED.map((r) => JSON.stringify(r)).join('\n'));
    const io = captureIO();
    expect(await judge([tmp.path('p.jsonl'), '--judge', 'local', '-o', tmp.path('j.jsonl')], io)).toBe(0);
    const out = (await readFile(tmp.path('j.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(out[0]).toMatchObject({ id: 'a', format: 5, total_score: 5, failed: false, judge: 'local-rubric', verifier: { pass: 1, rule: 'echo' } });
    // An empty generation is a failed sample, as in the public judge, not five 1s.
    expect(out[1]).toMatchObject({ id: 'b', failed: true, error: 'No model generation', total_score: null });
    expect(io.stdout).toMatch(/terminal\s+100\.00/);
    expect(io.stderr).toContain('1 of 2 judgements failed');
    const s = captureIO();
    expect(await score([tmp.path('j.jsonl')], s)).toBe(0);
    expect(s.stdout).toMatch(/overall\s+100\.00\s+100\.00\s+100\.00\s+100\.00\s+100\.00\s+100\.00\s+1\s+1/);
  });

  it('writes JSONL to stdout and the table to stderr without -o', async () => {
    await writeFile(tmp.path('p.jsonl'), JSON.stringify(PRED[0]));
    const io = captureIO();
    expect(await judge([tmp.path('p.jsonl')], io)).toBe(0);
    expect(JSON.parse(io.stdout).total_score).toBe(5);
    expect(io.stderr).toContain('overall');
  });

  it('judges through an endpoint, and reports a refused key', async () => {
    await writeFile(tmp.path('p.jsonl'), PRED.map((r) => JSON.stringify(r)).join('\n'));
    const io = captureIO();
    expect(await judge([tmp.path('p.jsonl'), '--judge', 'endpoint', '--base-url', base, '--model', 'm', '--api-key', 'k', '-o', tmp.path('j.jsonl')], io)).toBe(
      0,
    );
    const out = (await readFile(tmp.path('j.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(out.map((r) => r.total_score)).toEqual([4, null]);
    expect(out[0].judge).toBe('judge:m');
    expect(out[1]).toMatchObject({ failed: true, error: 'No model generation' });
    const before = calls;
    const bad = captureIO();
    expect(
      await judge(
        [
          tmp.path('p.jsonl'),
          '--judge',
          'endpoint',
          '--base-url',
          base,
          '--model',
          'm',
          '--api-key',
          'wrong',
          '--concurrency',
          '1',
          '-o',
          tmp.path('bad.jsonl'),
        ],
        bad,
      ),
    ).toBe(1);
    expect(bad.stderr).toContain('refused the API key (HTTP 401: bad key)');
    expect(calls - before).toBe(1);
    // The output file is still written, every record in it, failures marked.
    const written = (await readFile(tmp.path('bad.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(written.map((r) => [r.id, r.failed])).toEqual([
      ['a', true],
      ['b', true],
    ]);
    expect(written[0].error).toContain('not judged: the endpoint');
  });

  it('exits 1 when every judgement failed, saying why, and still writes the failed records', async () => {
    await writeFile(tmp.path('p.jsonl'), JSON.stringify(PRED[0]));
    const io = captureIO();
    expect(
      await judge(
        [tmp.path('p.jsonl'), '--judge', 'endpoint', '--base-url', base, '--model', 'm', '--api-key', 'mute', '--retries', '1', '-o', tmp.path('j.jsonl')],
        io,
      ),
    ).toBe(1);
    expect(io.stderr).toContain('1 of 1 judgements failed');
    expect(io.stderr).toContain('no usable verdict after 2 attempts');
    const out = JSON.parse(await readFile(tmp.path('j.jsonl'), 'utf8'));
    expect(out).toMatchObject({ id: 'a', failed: true });
    expect(out.error).toContain('no usable verdict');
  });

  it('reads the domain from a prefixed task, so the verifier stays on', async () => {
    await writeFile(tmp.path('p.jsonl'), JSON.stringify({ ...PRED[0], task: 'agentworldbench/terminal' }));
    const io = captureIO();
    expect(await judge([tmp.path('p.jsonl'), '-o', tmp.path('j.jsonl')], io)).toBe(0);
    const out = JSON.parse(await readFile(tmp.path('j.jsonl'), 'utf8'));
    expect(out.verifier).toMatchObject({ applicable: true, rule: 'echo', pass: 1 });
    expect(out.task).toBe('agentworldbench/terminal');
    expect(io.stdout).toMatch(/^terminal\s/m);
  });

  it('sends --max-tokens and --temperature, defaulting to the public 32768 and 0.6, and loads --judge-prompts per domain', async () => {
    await writeFile(tmp.path('p.jsonl'), JSON.stringify({ ...PRED[0], task: 'agentworldbench/terminal' }));
    const args = [tmp.path('p.jsonl'), '--judge', 'endpoint', '--base-url', base, '--model', 'm', '--api-key', 'k', '-o', tmp.path('j.jsonl')];
    expect(await judge(args, captureIO())).toBe(0);
    expect(bodies[bodies.length - 1]).toMatchObject({ max_tokens: 32768, temperature: 0.6 });
    await mkdir(join(tmp.dir, 'prompts', 'terminal'), { recursive: true });
    await writeFile(join(tmp.dir, 'prompts', 'terminal', 'judge_system_prompt.txt'), 'You grade terminal simulations.');
    expect(await judge([...args, '--max-tokens', '4096', '--temperature', '0', '--judge-prompts', join(tmp.dir, 'prompts')], captureIO())).toBe(0);
    const body = bodies[bodies.length - 1] as { max_tokens: number; temperature: number; messages: { role: string; content: string }[] };
    expect([body.max_tokens, body.temperature]).toEqual([4096, 0]);
    expect(body.messages[0]).toEqual({ role: 'system', content: 'You grade terminal simulations.' });
    // A domain without a prompt file is an error naming the file, before any request.
    await writeFile(tmp.path('q.jsonl'), JSON.stringify({ ...PRED[0], task: 'os' }));
    const io = captureIO();
    expect(await judge([tmp.path('q.jsonl'), ...args.slice(1), '--judge-prompts', join(tmp.dir, 'prompts')], io)).toBe(1);
    expect(io.stderr).toContain(join(tmp.dir, 'prompts', 'os', 'judge_system_prompt.txt'));
    await expect(judge([tmp.path('p.jsonl'), '--max-tokens', '10'], captureIO())).rejects.toThrow('--max-tokens is for --judge endpoint');
  });

  it('rejects bad input and bad usage', async () => {
    await writeFile(tmp.path('p.jsonl'), JSON.stringify({ ...PRED[0], gen: undefined }));
    const io = captureIO();
    expect(await judge([tmp.path('p.jsonl')], io)).toBe(1);
    expect(io.stderr).toContain('p.jsonl:1: "gen" (the model output) must be a string');
    await expect(judge([tmp.path('p.jsonl'), '--judge', 'gpt'], captureIO())).rejects.toBeInstanceOf(UsageError);
    await expect(judge([tmp.path('p.jsonl'), '--judge', 'endpoint'], captureIO())).rejects.toThrow('--base-url and --model');
    await expect(judge([tmp.path('p.jsonl'), '--concurrency', '0'], captureIO())).rejects.toThrow('--concurrency');
  });
});

async function tempDir(): Promise<{ dir: string; path: (name: string) => string; done: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'lwm-judge-'));
  return { dir, path: (n) => join(dir, n), done: () => rm(dir, { recursive: true, force: true }) };
}
