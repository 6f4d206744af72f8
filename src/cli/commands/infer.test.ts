// `lwm infer` with each backend: the baselines' exact outputs on AgentWorldBench records and on
// native trajectories, and an OpenAI-compatible endpoint served here on 127.0.0.1 (streamed and
// whole replies, a 500 then success, a slow reply, a reply past the timeout, concurrency with
// the output order kept, --resume after a run that stopped and after one that was killed).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import infer from './infer.ts';
import { UsageError } from '../io.ts';
import { captureIO } from '../testing.ts';
import { generateTrajectories } from '../../envs/generate.ts';
import { splitByTrajectory } from '../../core/turns/index.ts';
import { systemPromptToText } from '../../core/formats/systemPromptText.ts';

const tag = (o: string) => `<predicted_observation>\n${o}\n</predicted_observation>`;

const SYSTEM = systemPromptToText({
  task_description: 'Use the shell.',
  action_space: 'bash commands',
  initial_state: 'user@box:~$',
  demonstrations: '',
  simulation_instruction: 'Be exact.',
});
/** A small AgentWorldBench file: headers as the benchmark writes them, extra fields to keep. */
const AWB = [
  {
    task: 'agentworldbench/terminal',
    id: 'a_t1',
    prompt: ['### Turn 1\n**Action:**\necho hi > a.txt'],
    response: ['**Environment Observation:**\n'],
    current_prompt: '### Turn 1\n**Action:**\necho hi > a.txt',
    system_str: SYSTEM,
    turn_idx: 1,
    total_turns: 2,
    extra: { source: 'x', n: [1, 2] },
  },
  {
    task: 'agentworldbench/terminal',
    id: 'a_t2',
    prompt: ['### Turn 1\n**Action:**\necho hi > a.txt', '### Turn 2\n**Action:**\ncat a.txt'],
    response: ['**Environment Observation:**\n', '**Environment Observation:**\nhi'],
    current_prompt: '### Turn 2\n**Action:**\ncat a.txt',
    system_str: SYSTEM,
    turn_idx: 2,
    total_turns: 2,
    extra: 'kept',
  },
  {
    task: 'mcp',
    id: 7,
    prompt: ['{"name": "get", "arguments": {"id": "A1"}}'],
    response: ['{"id": "A1", "state": "open"}'],
    system_str: 'You are an MCP server.',
    turn_idx: 1,
  },
];

let tmp: string;
const path = (n: string) => join(tmp, n);
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'lwm-infer-'));
  await writeFile(path('awb.jsonl'), AWB.map((r) => JSON.stringify(r)).join('\n') + '\n');
});
afterEach(() => rm(tmp, { recursive: true, force: true }));

const lines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function run(args: string[]) {
  const io = captureIO();
  const code = await infer(args, io);
  return { code, out: io.stdout, err: io.stderr, records: lines(io.stdout) };
}

describe('lwm infer: baselines', () => {
  it('copy-last repeats the previous observation (turn 1: the initial state) and keeps every input field', async () => {
    const r = await run([path('awb.jsonl'), '--backend', 'copy-last']);
    expect(r.code).toBe(0);
    expect(r.records).toEqual([
      { ...AWB[0], gen: tag('user@box:~$') },
      { ...AWB[1], gen: tag('') },
      { ...AWB[2], gen: tag('') }, // an unsplit system prompt has no initial state
    ]);
    expect(Object.keys(r.records[0])).toEqual([...Object.keys(AWB[0]), 'gen']);
    expect(r.err).toMatch(/copy-last 3\/3/);
  });

  it('reference answers with the real observation, headers removed', async () => {
    const r = await run([path('awb.jsonl'), '--backend', 'reference', '-o', path('ref.jsonl')]);
    expect(r.code).toBe(0);
    expect(r.out).toBe('');
    expect(lines(readFileSync(path('ref.jsonl'), 'utf8')).map((x) => x.gen)).toEqual([tag(''), tag('hi'), tag('{"id": "A1", "state": "open"}')]);
  });

  it('reads native trajectories: their eval-split turns, laid out as the AgentWorldBench export', async () => {
    const data = [...generateTrajectories('terminal', 4, 3), ...generateTrajectories('mcp', 4, 3)];
    await writeFile(path('native.jsonl'), data.map((t) => JSON.stringify(t)).join('\n') + '\n');
    const held = splitByTrajectory(data, { evalFraction: 0.5, seed: 2 }).eval;
    const turns = held.flatMap((t) => t.turns.map((u, i) => ({ t, u, i })));
    const copy = await run([path('native.jsonl'), '--backend', 'copy-last', '--eval-fraction', '0.5', '--split-seed', '2']);
    const ref = await run([path('native.jsonl'), '--backend', 'reference', '--eval-fraction', '0.5', '--split-seed', '2']);
    expect(copy.code).toBe(0);
    expect(copy.records.length).toBe(turns.length);
    turns.forEach(({ t, u, i }, k) => {
      expect(copy.records[k]).toMatchObject({
        task: t.domain,
        id: `${t.id}_t${i + 1}`,
        turn_idx: i + 1,
        total_turns: t.turns.length,
        system_str: systemPromptToText(t.system_prompt),
      });
      expect(copy.records[k].gen).toBe(tag(i === 0 ? t.system_prompt.initial_state : t.turns[i - 1].observation));
      expect(ref.records[k].gen).toBe(tag(u.observation));
      if (u.metadata?.spans) expect(ref.records[k].spans).toEqual(u.metadata.spans);
    });
    expect(copy.err).toContain(`${turns.length} eval-split turns`);
  });

  it('--limit, and usage errors for options a baseline does not take', async () => {
    expect((await run([path('awb.jsonl'), '--backend', 'reference', '--limit', '2'])).records.length).toBe(2);
    await expect(run([path('awb.jsonl'), '--backend', 'copy-last', '--temperature', '0.5'])).rejects.toBeInstanceOf(UsageError);
    await expect(run([path('awb.jsonl'), '--backend', 'nope'])).rejects.toBeInstanceOf(UsageError);
    await expect(run([path('awb.jsonl'), '--backend', 'endpoint', '--model', 'm'])).rejects.toBeInstanceOf(UsageError);
    await expect(run([path('awb.jsonl'), '--backend', 'reference', '--resume'])).rejects.toBeInstanceOf(UsageError);
    await expect(run([path('awb.jsonl'), '--backend', 'copy-last', '--prefix-slots', '2'])).rejects.toThrow(/--prefix-slots is for --backend local/);
    await expect(run([path('awb.jsonl'), '--backend', 'local', '--model', 'x.safetensors', '--prefix-slots', '1.5'])).rejects.toThrow(
      /--prefix-slots must be an integer ≥ 0/,
    );
    await expect(run([path('awb.jsonl'), '--backend', 'copy-last', '--weights', 'f16'])).rejects.toThrow(/--weights is for --backend local/);
    await expect(run([path('awb.jsonl'), '--backend', 'local', '--model', 'x.safetensors', '--weights', 'bf16'])).rejects.toThrow(
      /--weights must be f32 or f16, got "bf16"/,
    );
    const data = generateTrajectories('terminal', 1, 3);
    await writeFile(path('one.jsonl'), JSON.stringify(data[0]) + '\n');
    const none = await run([path('one.jsonl'), '--backend', 'reference']);
    expect(none.code).toBe(1);
    expect(none.err).toContain('raise --eval-fraction');
  });
});

// ---- an OpenAI-compatible server ---------------------------------------------------------

interface Seen {
  model: string;
  stream: boolean;
  messages: { role: string; content: string }[];
  body: Record<string, unknown>;
}
let server: Server;
let base: string;
let seen: Seen[] = [];
let served = 0;
let inFlight = 0;
let maxInFlight = 0;
const failedOnce = new Set<string>();

/** The answer every test model gives: the current action, tagged, so each record's gen is known. */
const answerOf = (messages: Seen['messages']) =>
  `<predicted_observation>${messages[messages.length - 1].content.replace(/^### Turn \d+\n\*\*Action:\*\*\n/, '')}</predicted_observation>`;

function reply(res: ServerResponse, stream: boolean, content: string) {
  if (!stream) {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    return res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] }));
  }
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  const half = Math.floor(content.length / 2);
  for (const piece of [content.slice(0, half), content.slice(half)])
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: piece } }] })}\n\n`);
  res.end('data: [DONE]\n\n');
}

async function handle(req: IncomingMessage, res: ServerResponse) {
  let raw = '';
  for await (const c of req) raw += c;
  const body = JSON.parse(raw) as Record<string, unknown>;
  const messages = body.messages as Seen['messages'];
  const s: Seen = { model: String(body.model), stream: body.stream === true, messages, body };
  seen.push(s);
  served++;
  const content = answerOf(messages);
  const last = messages[messages.length - 1].content;
  switch (s.model) {
    case 'echo':
      return reply(res, s.stream, content);
    case 'fake-model': // the public fixture's fake client: the last message as it came, tagged
      return reply(res, s.stream, `<predicted_observation>${last}</predicted_observation>`);
    case 'flaky': // a 500 on each record's first request, then the answer
      if (!failedOnce.has(last)) {
        failedOnce.add(last);
        res.writeHead(500, { 'Content-Type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'engine hiccup' } }));
      }
      return reply(res, s.stream, content);
    case 'slow': // answers, but only after a while
      return void setTimeout(() => reply(res, s.stream, content), 300);
    case 'stall-mcp': // never answers the mcp record: its request times out, the others go through
      if (last.includes('"A1"')) return;
      return reply(res, s.stream, content);
    case 'reverse': {
      // The first record is the slowest: finished out of order, written in order.
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const delay = last.includes('echo hi') ? 250 : last.includes('cat a.txt') ? 120 : 10;
      return void setTimeout(() => {
        inFlight--;
        reply(res, s.stream, content);
      }, delay);
    }
    case 'dies-after-1': // serves one request, then refuses every key: a run that stops mid-way
      if (served > 1) {
        res.writeHead(401, { 'Content-Type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'key revoked' } }));
      }
      return reply(res, s.stream, content);
    case 'crawl': // one answer every 400 ms: slow enough to kill the process mid-way
      return void setTimeout(() => reply(res, s.stream, content), 400);
    default:
      res.writeHead(400);
      res.end(`unknown test model ${s.model}`);
  }
}

beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  seen = [];
  served = 0;
  maxInFlight = 0;
  failedOnce.clear();
});

const endpoint = (model: string, ...more: string[]) => [path('awb.jsonl'), '--backend', 'endpoint', '--base-url', base, '--model', model, ...more];
const expectedGens = [tag('echo hi > a.txt'), tag('cat a.txt'), tag('{"name": "get", "arguments": {"id": "A1"}}')].map((g) => g.replace(/\n/g, ''));

describe('lwm infer: endpoint', () => {
  it('sends the AgentWorldBench layout, streamed, and keeps every input field', async () => {
    const r = await run(endpoint('echo', '--max-tokens', '64', '--temperature', '0.2', '--top-p', '0.9', '--seed', '5', '--api-key', 'sk-test'));
    expect(r.code).toBe(0);
    expect(r.records).toEqual(AWB.map((a, i) => ({ ...a, gen: expectedGens[i] })));
    expect(seen.every((s) => s.stream)).toBe(true);
    // The public eval.py layout: system_str, then prompt[i] / response[i] of earlier turns, then prompt[turn_idx - 1].
    const second = seen.find((s) => s.messages.length === 4)!;
    expect(second.messages).toEqual([
      { role: 'system', content: SYSTEM },
      { role: 'user', content: AWB[1].prompt[0] },
      { role: 'assistant', content: AWB[1].response[0] },
      { role: 'user', content: AWB[1].prompt[1] },
    ]);
    expect(second.body).toMatchObject({ model: 'echo', max_tokens: 64, temperature: 0.2, top_p: 0.9, seed: 5 });
    expect(r.err).not.toContain('sk-test');
  });

  it("sends exactly the public inference script's requests and writes its prediction records", async () => {
    // Written by the public eval.py run_inference with a recording fake client (scripts/fixtures/agentworldbench-infer.py).
    const fixture = JSON.parse(readFileSync(fileURLToPath(new URL('../../core/bench/fixtures/awb-public-infer.json', import.meta.url)), 'utf8'));
    await writeFile(path('public.jsonl'), fixture.records.map((r: unknown) => JSON.stringify(r)).join('\n') + '\n');
    const r = await run([path('public.jsonl'), '--backend', 'endpoint', '--base-url', base, '--model', 'fake-model', '--no-stream', '--concurrency', '1']);
    expect(r.code).toBe(0);
    expect(seen.map((x) => ({ model: x.model, messages: x.messages, max_tokens: x.body.max_tokens, temperature: x.body.temperature }))).toEqual(
      fixture.requests,
    );
    expect(r.records).toEqual(fixture.predictions);
  });

  it('asks for whole replies with --no-stream; public defaults for tokens and temperature', async () => {
    const r = await run(endpoint('echo', '--no-stream'));
    expect(r.records.map((x) => x.gen)).toEqual(expectedGens);
    expect(seen.every((s) => !s.stream)).toBe(true);
    expect(seen[0].body).toMatchObject({ max_tokens: 32768, temperature: 0.6 });
  });

  it('retries a 500 and gets the answer', async () => {
    const r = await run(endpoint('flaky', '--concurrency', '1'));
    expect(r.code).toBe(0);
    expect(r.records.map((x) => x.gen)).toEqual(expectedGens);
    expect(seen.length).toBe(6);
    expect(r.records.some((x) => 'gen_error' in x)).toBe(false);
  });

  it('waits for a slow reply; a reply past --timeout is a gen_error and the run goes on', async () => {
    const slow = await run(endpoint('slow', '--timeout', '5'));
    expect(slow.records.map((x) => x.gen)).toEqual(expectedGens);
    const stalled = await run(endpoint('stall-mcp', '--timeout', '0.2', '--retries', '0', '-o', path('p.jsonl')));
    expect(stalled.code).toBe(0);
    const out = lines(readFileSync(path('p.jsonl'), 'utf8'));
    expect(out.map((x) => x.gen)).toEqual([expectedGens[0], expectedGens[1], '']);
    expect(out[2]).toMatchObject({ ...AWB[2], gen: '' });
    expect(String(out[2].gen_error)).toMatch(/^endpoint:stall-mcp: no answer from .* \(timeout\)/);
    expect(stalled.err).toContain('1 of 3 generations failed');
  });

  it('--concurrency runs requests at once and keeps the input order', async () => {
    const r = await run(endpoint('reverse', '--concurrency', '3', '--no-stream'));
    expect(maxInFlight).toBe(3);
    expect(r.records.map((x) => x.id)).toEqual(['a_t1', 'a_t2', 7]);
    expect(r.records.map((x) => x.gen)).toEqual(expectedGens);
  });

  it('--resume after a run that stopped: keeps what is there, retries failures, ends in input order', async () => {
    const first = await run(endpoint('dies-after-1', '--concurrency', '1', '-o', path('p.jsonl')));
    expect(first.code).toBe(1);
    expect(first.err).toContain('key revoked');
    expect(first.err).toContain('--resume');
    expect(lines(readFileSync(path('p.jsonl'), 'utf8')).map((x) => x.id)).toEqual(['a_t1']);
    seen = [];
    const again = await run(endpoint('echo', '--resume', '-o', path('p.jsonl')));
    expect(again.code).toBe(0);
    expect(again.err).toContain('1 of 3 records already in');
    expect(seen.length).toBe(2);
    expect(lines(readFileSync(path('p.jsonl'), 'utf8'))).toEqual(AWB.map((a, i) => ({ ...a, gen: expectedGens[i] })));
    // A torn last line (a kill mid-write) is skipped, and the records appended after it stay readable.
    await writeFile(path('p.jsonl'), readFileSync(path('p.jsonl'), 'utf8').split('\n')[0] + '\n{"task": "mcp", "id": 7, "tu');
    served = 0;
    expect((await run(endpoint('dies-after-1', '--resume', '--concurrency', '1', '-o', path('p.jsonl')))).code).toBe(1);
    const journal = readFileSync(path('p.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim());
    expect(journal.length).toBe(3);
    expect([JSON.parse(journal[0]).id, JSON.parse(journal[2]).id]).toEqual(['a_t1', 'a_t2']);
    seen = [];
    expect((await run(endpoint('echo', '--resume', '-o', path('p.jsonl')))).code).toBe(0);
    expect(seen.length).toBe(1);
    expect(lines(readFileSync(path('p.jsonl'), 'utf8'))).toEqual(AWB.map((a, i) => ({ ...a, gen: expectedGens[i] })));
    // A record that failed is generated again on --resume, and lands in its place.
    const withError = lines(readFileSync(path('p.jsonl'), 'utf8'));
    withError[1] = { ...withError[1], gen: '', gen_error: 'x' };
    await writeFile(path('p.jsonl'), withError.map((x) => JSON.stringify(x)).join('\n') + '\n');
    seen = [];
    await run(endpoint('echo', '--resume', '-o', path('p.jsonl')));
    expect(seen.length).toBe(1);
    expect(lines(readFileSync(path('p.jsonl'), 'utf8'))).toEqual(AWB.map((a, i) => ({ ...a, gen: expectedGens[i] })));
  });

  it('--resume after the process was killed mid-way', async () => {
    const bin = fileURLToPath(new URL('../../../bin/lwm.mjs', import.meta.url));
    const out = path('killed.jsonl');
    const child = spawn(process.execPath, [bin, 'infer', ...endpoint('crawl', '--concurrency', '1', '-o', out)], { stdio: 'ignore' });
    const written = () => (existsSync(out) ? lines(readFileSync(out, 'utf8')).length : 0);
    const t0 = Date.now();
    while (written() < 1 && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const partial = lines(readFileSync(out, 'utf8'));
    expect(partial.length).toBeGreaterThanOrEqual(1);
    expect(partial.length).toBeLessThan(3);
    expect(partial).toEqual(AWB.slice(0, partial.length).map((a, i) => ({ ...a, gen: expectedGens[i] })));
    seen = [];
    const again = await run(endpoint('echo', '--resume', '-o', out));
    expect(again.code).toBe(0);
    expect(seen.length).toBe(3 - partial.length);
    expect(lines(readFileSync(out, 'utf8'))).toEqual(AWB.map((a, i) => ({ ...a, gen: expectedGens[i] })));
  }, 90_000);
});
