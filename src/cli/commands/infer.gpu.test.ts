// `lwm infer --backend local`: a micro checkpoint (random weights, its tokenizer and training
// spec in the metadata) generating on the GPU, prompted with the template it was trained with.
import { describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import infer from './infer.ts';
import { captureIO, microCheckpoint } from '../testing.ts';
import { generateTrajectories } from '../../envs/generate.ts';
import { toAgentWorldBenchRecords } from '../../core/formats/agentworldbench.ts';

describe('lwm infer --backend local', () => {
  it('writes one prediction per record from a micro checkpoint, greedy and repeatable', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-infer-gpu-'));
    try {
      const data = generateTrajectories('terminal', 2, 5);
      const ckpt = join(dir, 'micro.safetensors');
      await writeFile(ckpt, microCheckpoint(data, { template: 'v1' }));
      const records = toAgentWorldBenchRecords(data[0]).slice(0, 2);
      await writeFile(join(dir, 'awb.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const run = async (...more: string[]) => {
        const io = captureIO();
        const code = await infer([join(dir, 'awb.jsonl'), '--backend', 'local', '--model', ckpt, '--max-tokens', '6', ...more], io);
        expect(io.stderr).toContain('local:micro.safetensors 2/2');
        return {
          code,
          records: io.stdout
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l)),
        };
      };
      const a = await run('-o', '-');
      expect(a.code).toBe(0);
      expect(a.records.length).toBe(2);
      a.records.forEach((r, i) => {
        expect(r).toMatchObject({ ...records[i], gen: expect.any(String) });
        expect(r.gen_error).toBeUndefined();
      });
      // The checkpoint's template (v1, from its spec) is the default; greedy decoding repeats.
      const b = await run('--template', 'v1');
      expect(b.records.map((r) => r.gen)).toEqual(a.records.map((r) => r.gen));
      // f16 weights on the GPU: the same records, each with a generation (a random model's tokens may differ by rounding).
      const h = await run('--weights', 'f16');
      expect(h.code).toBe(0);
      h.records.forEach((r, i) => expect(r).toMatchObject({ ...records[i], gen: expect.any(String) }));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("runs a trajectory's turns one after another on the kept KV cache, with the tokens of a run without it (--prefix-slots 0), output in input order", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-infer-gpu-'));
    try {
      const data = generateTrajectories('terminal', 2, 5);
      const ckpt = join(dir, 'micro.safetensors');
      await writeFile(ckpt, microCheckpoint(data, { template: 'compact', scale: 10 })); // sharp: a wrong cache row shows in the tokens
      // Turn-major, as a file sorted by turn: the two trajectories' turns interleaved.
      const [x, y] = data.map((t) => toAgentWorldBenchRecords(t).slice(0, 3));
      const records = [x[0], y[0], x[1], y[1], x[2], y[2]];
      await writeFile(join(dir, 'awb.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const run = async (...more: string[]) => {
        const io = captureIO();
        expect(await infer([join(dir, 'awb.jsonl'), '--backend', 'local', '--model', ckpt, '--max-tokens', '5', ...more], io)).toBe(0);
        const reused = Number(/, (\d+) \(\d+%\) taken from the KV cache/.exec(io.stderr)?.[1]);
        return {
          reused,
          records: io.stdout
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l)),
        };
      };
      const kept = await run();
      const plain = await run('--prefix-slots', '0');
      expect(kept.records.map(({ gen: _, ...r }) => r)).toEqual(records);
      expect(kept.reused).toBeGreaterThan(100);
      expect(plain.reused).toBe(0);
      expect(kept.records.map((r) => r.gen)).toEqual(plain.records.map((r) => r.gen));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
