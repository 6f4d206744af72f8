// `lwm labels` end to end against a fake OpenAI-compatible server that plays both the teacher
// (streamed) and an LLM judge; then `lwm train --labels` reading what it wrote.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTrajectories } from '../../envs/generate.ts';
import { defaultRequest, sampleFromTurn } from '../../core/bench/runner.ts';
import { BUILTIN_TEMPLATES, renderSystem } from '../../core/templates/index.ts';
import { categorizeDataset } from '../../core/masking/index.ts';
import { labelSamples, readLabelFile } from '../../train/labels.ts';
import { UsageError } from '../io.ts';
import { captureIO } from '../testing.ts';
import labels from './labels.ts';
import train from './train.ts';

const data = [...generateTrajectories('terminal', 6, 11), ...generateTrajectories('mcp', 6, 11)];
// What the teacher is asked for each train-split turn → that turn's real observation.
const referenceOf = new Map(
  labelSamples(data, { seed: 0, evalFraction: 0.1 }).map((s) => {
    const r = defaultRequest(sampleFromTurn(s, renderSystem(BUILTIN_TEMPLATES.v0, s))) as { system: string; messages: unknown[] };
    return [JSON.stringify(r.messages), s.targetObservation];
  }),
);

let server: Server;
let base: string;
const seen = { teacher: 0, judge: 0 };
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const b = JSON.parse(body) as { model: string; seed?: number; stream?: boolean; messages: { role: string; content: string }[] };
      if (b.model === 'teacher') {
        seen.teacher++;
        // Candidate c of a turn: 0 the real observation, 1 garbage, 2 text the judge cannot grade.
        const c = (b.seed ?? 0) % 101;
        const ref = referenceOf.get(JSON.stringify(b.messages.slice(1)));
        const text =
          ref === undefined
            ? 'UNKNOWN TURN'
            : c === 0
              ? `<think>seen before</think><predicted_observation>\n${ref}\n</predicted_observation>`
              : c === 1
                ? 'lorem ipsum dolor'
                : 'UNGRADEABLE';
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        for (let i = 0; i < text.length; i += 40) res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: text.slice(i, i + 40) } }] })}\n\n`);
        return res.end('data: [DONE]\n\n');
      }
      seen.judge++;
      const user = b.messages.at(-1)!.content;
      const simulated = /<simulated>\n([\s\S]*?)\n<\/simulated>/.exec(user)?.[1] ?? '';
      const n = simulated.includes('lorem') ? 1 : 5;
      const content = simulated.includes('UNGRADEABLE')
        ? 'I cannot grade this.'
        : `<verdict>{"scores": {"format": ${n}, "factuality": ${n}, "consistency": ${n}, "realism": ${n}, "quality": ${n}}}</verdict>`;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { content } }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

let dir: string;
const path = (n: string) => join(dir, n);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lwm-labels-'));
  await writeFile(path('data.jsonl'), data.map((t) => JSON.stringify(t)).join('\n') + '\n');
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

describe('lwm labels', () => {
  it('writes the kept candidates with their mask weights and reports retention per domain, judge failures apart', async () => {
    const io = captureIO();
    const code = await labels(
      [
        '--data',
        path('data.jsonl'),
        '--teacher',
        'endpoint',
        '--base-url',
        base,
        '--model',
        'teacher',
        '--api-key',
        'k',
        '--judge',
        'endpoint',
        '--judge-base-url',
        base,
        '--judge-model',
        'judge',
        '--candidates',
        '3',
        '--samples',
        '10',
        '-o',
        path('labels.jsonl'),
      ],
      io,
    );
    expect(code, io.stderr).toBe(0);
    // 10 turns × 3 candidates: 10 exact (kept), 10 garbage (rejected), 10 the judge could not grade.
    expect(io.stdout.split('\n')[0]).toBe('retention: 10 of 20 kept, 50.0% (10 judge failures left out)');
    expect(io.stdout).toMatch(/^ {2}mcp: \d+ of \d+ kept, 50\.0% \(\d+ judge failures? left out\)$/m);
    expect(io.stdout).toMatch(/^ {2}terminal: \d+ of \d+ kept, 50\.0%/m);
    const lines = (await readFile(path('labels.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(10);
    const masks = new Map(categorizeDataset(data).map((m) => [m.id, m]));
    for (const l of lines) {
      expect(l.reasoning).toBe('seen before');
      expect(l.score).toBe(5);
      expect(l.weight).toBe(masks.get(l.trajectory_id)!.turns[l.turn_index].weight);
    }
    // What lwm train reads back: the label on the right turn.
    const read = readLabelFile(await readFile(path('labels.jsonl'), 'utf8'), 'labels.jsonl', data);
    expect(read.errors).toEqual([]);
    expect(
      read.labels.every(
        (x) =>
          x.sample.targetObservation ===
          referenceOf.get(
            JSON.stringify((defaultRequest(sampleFromTurn(x.sample, renderSystem(BUILTIN_TEMPLATES.v0, x.sample))) as { messages: unknown[] }).messages),
          ),
      ),
    ).toBe(true);

    const json = captureIO();
    expect(
      await labels(
        [
          '--data',
          path('data.jsonl'),
          '--teacher',
          'endpoint',
          '--base-url',
          base,
          '--model',
          'teacher',
          '--candidates',
          '2',
          '--samples',
          '4',
          '--json',
          '-o',
          path('l2.jsonl'),
        ],
        json,
      ),
    ).toBe(0);
    const j = JSON.parse(json.stdout);
    // The local rubric judge (default) never fails and rejects the 4 garbage candidates (and
    // perhaps an exact copy of an empty observation, which it scores low).
    expect(j.overall).toMatchObject({ failed: 0, judged: 8, total: 8 });
    expect(j.overall.rejected).toBeGreaterThanOrEqual(4);
    expect(j.overall.kept + j.overall.rejected).toBe(8);
    expect(j.per_domain.terminal.judged + j.per_domain.mcp.judged).toBe(8);
  });

  it('refuses incomplete settings as usage errors', async () => {
    const run = (...a: string[]) => labels(['--data', path('data.jsonl'), ...a], captureIO());
    await expect(run('-o', path('x'))).rejects.toThrow(UsageError);
    await expect(run('--teacher', 'local', '-o', path('x'))).rejects.toThrow(/--teacher local needs --from CKPT/);
    await expect(run('--teacher', 'endpoint', '-o', path('x'))).rejects.toThrow(/needs --base-url and --model/);
    await expect(run('--teacher', 'endpoint', '--base-url', base, '--model', 'teacher', '--judge', 'endpoint', '-o', path('x'))).rejects.toThrow(
      /--judge endpoint needs --judge-base-url and --judge-model/,
    );
    await expect(run('--teacher', 'endpoint', '--base-url', base, '--model', 'teacher', '--threshold', '6', '-o', path('x'))).rejects.toThrow(
      /--threshold must be a number in \[1, 5\]/,
    );
    await expect(run('--teacher', 'endpoint', '--base-url', base, '--model', 'teacher')).rejects.toThrow(/-o LABELS\.jsonl is required/);
  });
});

describe('lwm train --labels', () => {
  it('reports a bad label file by line before the GPU starts, and is only for SFT', async () => {
    await writeFile(
      path('bad.jsonl'),
      `${JSON.stringify({ trajectory_id: data[0].id, turn_index: 0, label: 'ok' })}\n${JSON.stringify({ trajectory_id: 'ghost', turn_index: 0, label: 'x' })}\n`,
    );
    const io = captureIO();
    expect(await train(['--stage', 'sft', '--data', path('data.jsonl'), '--labels', path('bad.jsonl')], io)).toBe(1);
    expect(io.stderr).toContain(`${path('bad.jsonl')}:2: no trajectory "ghost"`);
    expect(io.stderr).not.toContain('adapter:');
    await expect(train(['--stage', 'rl', '--data', path('data.jsonl'), '--labels', path('bad.jsonl')], captureIO())).rejects.toThrow(
      /--labels is for --stage sft/,
    );
  });
});
