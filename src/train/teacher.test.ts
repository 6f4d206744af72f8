// Rejection sampling inside an SFT run (what the Train view starts), with an endpoint teacher.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PREDICTION_INSTRUCTION } from '../core/bench/runner.ts';
import { generateTrajectories } from '../envs/generate.ts';
import { expandTurns } from '../core/turns/index.ts';
import { resolveSpec } from './pipeline.ts';
import { rejectionLabels } from './teacher.ts';

const samples = expandTurns(generateTrajectories('terminal', 3, 8)).filter((s) => s.targetObservation.trim().length > 10);
let server: Server;
let base: string;
beforeAll(async () => {
  // A teacher that copies the real observation of the action it was asked about, or babbles.
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const b = JSON.parse(body) as { seed: number; messages: { content: string }[] };
      const user = b.messages.at(-1)!.content;
      const s = samples.find(
        (x) =>
          user.endsWith(`### Turn ${x.turnIndex + 1}\n**Action:**\n${x.action}\n\n${PREDICTION_INSTRUCTION}`) &&
          user.split('### Turn ').length - 1 === x.turnIndex + 1,
      );
      const text = b.seed % 101 === 0 && s ? `<predicted_observation>\n${s.targetObservation}\n</predicted_observation>` : 'lorem ipsum';
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify({ choices: [{ delta: { content: text } }] })}\n\ndata: [DONE]\n\n`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('rejection sampling in a run', () => {
  it('labels the turns, reports retention as log and step-0 metrics, and keeps each turn’s mask weight', async () => {
    const logs: string[] = [];
    const metrics: { step: number; values: Record<string, number> }[] = [];
    const labels = await rejectionLabels({ teacher: 'endpoint', teacherEndpoint: { baseUrl: base, model: 't' }, candidates: 2, samples: 4 }, samples, {
      rt: undefined as never, // an endpoint teacher needs no GPU
      seed: 0,
      weightOf: (s) => (s.turnIndex % 2 ? 0.05 : 0.6),
      log: (m) => logs.push(m),
      metric: (step, values) => metrics.push({ step, values }),
    });
    expect(labels.length).toBeGreaterThan(0);
    expect(labels.length).toBeLessThanOrEqual(4);
    for (const l of labels) expect(l.weight).toBe(l.sample.turnIndex % 2 ? 0.05 : 0.6);
    expect(logs.join('\n')).toMatch(/retention: \d+ of 8 kept, \d+\.\d%/);
    expect(metrics).toEqual([
      { step: 0, values: expect.objectContaining({ labels_kept: labels.length, labels_judge_failed: 0, labels_retention: labels.length / 8 }) },
    ]);
  });

  it('says what is missing: a local teacher needs a starting checkpoint; labels are for SFT', async () => {
    const ctx = { rt: undefined as never, seed: 0, weightOf: () => 1, log: () => {}, metric: () => {} };
    await expect(rejectionLabels({ teacher: 'local' }, samples, ctx)).rejects.toThrow(/local teacher samples from the starting checkpoint/);
    await expect(rejectionLabels({ teacher: 'endpoint' }, samples, ctx)).rejects.toThrow(/endpoint teacher needs a base URL and a model/);
    expect(() => resolveSpec({ kind: 'train', stage: 'rl', preset: 'micro', steps: 1, labels: { teacher: 'local' } })).toThrow(/labels are for the SFT stage/);
    expect(() => resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1, labels: { teacher: 'local', threshold: 0 } })).toThrow(
      /threshold must be within 1–5/,
    );
    expect(() => resolveSpec({ kind: 'train', stage: 'rl', preset: 'micro', steps: 1, rl: { reward: 'closest' as never } })).toThrow(
      /rl.reward must be one of rubric, reference-ab, turing/,
    );
    expect(() => resolveSpec({ kind: 'train', stage: 'rl', preset: 'micro', steps: 1, rl: { rewardJudge: 'endpoint' } })).toThrow(/needs rl.judgeEndpoint/);
  });
});
