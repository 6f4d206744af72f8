// The local model behind the backend interface, driving the rejection-sampling builder.
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../envs/generate.ts';
import { localJudge } from '../core/judge/rubric.ts';
import { trainBpe } from '../core/tokenizer/index.ts';
import { expandTurns } from '../core/turns/index.ts';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { presetConfig } from '../core/model/config.ts';
import { GpuGenerator } from '../model/generate.ts';
import { initParams } from '../model/init.ts';
import { rejectionSample } from '../train/rejection.ts';
import { generateText } from '../core/backend.ts';
import { localBackend } from './local.ts';

describe('local backend', () => {
  it('streams text from the GPU model and serves as a rejection-sampling teacher', async () => {
    const rt = await gpuRuntime();
    const data = generateTrajectories('terminal', 2, 5);
    const tok = trainBpe(
      data.flatMap((t) => t.turns.flatMap((u) => [u.action, u.observation])),
      { vocabSize: 300 },
    );
    const config = presetConfig('micro', { vocabSize: tok.vocabSize, positions: 'rope', contextLength: 256 });
    const params = rt.storage('test.params', initParams(config, 3));
    const gen = new GpuGenerator(rt, config, params, { maxSequences: 1, maxLength: 256 });
    try {
      const backend = localBackend(gen, tok, 'local:micro');
      const a = await generateText(backend, { prompt: 'ls -la\n' }, { maxTokens: 12, temperature: 0 });
      const b = await generateText(backend, { system: 'a shell', messages: [{ role: 'user', content: 'ls -la' }] }, { maxTokens: 12, temperature: 0 });
      expect(a.length).toBeGreaterThan(0);
      expect(typeof b).toBe('string');
      expect(await generateText(backend, { prompt: 'ls -la\n' }, { maxTokens: 12, temperature: 0 })).toBe(a); // greedy is deterministic
      const samples = expandTurns(data).slice(0, 2);
      // An untrained model writes noise: at threshold 1 every judged candidate is kept.
      const r = await rejectionSample(samples, backend, localJudge, { candidates: 2, threshold: 1, maxTokens: 8 });
      expect(r.overall).toMatchObject({ total: 4, kept: 4, failed: 0, rate: 1 });
    } finally {
      gen.dispose();
      rt.release(params);
    }
  });
});
