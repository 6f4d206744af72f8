// Test helpers for the commands: a CliIO that records what a command prints and feeds it stdin
// lines, and a micro checkpoint of ours with random weights (its tokenizer and training spec in the metadata).
import { saveCheckpoint } from '../core/model/checkpoint.ts';
import { presetConfig } from '../core/model/config.ts';
import type { Trajectory } from '../core/schema/types.ts';
import { trainBpe } from '../core/tokenizer/index.ts';
import { initParams } from '../model/init.ts';
import type { CliIO } from './io.ts';

export function captureIO(stdin: string[] = []): CliIO & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    out(t: string) {
      io.stdout += t;
    },
    err(t: string) {
      io.stderr += t;
    },
    async *stdinLines() {
      for (const l of stdin) yield l;
    },
  };
  return io;
}

/**
 * The bytes of a micro checkpoint (RoPE, context 256) with random weights and a BPE tokenizer of
 * 300 ids learnt from `data`, trained (its spec says) with `template`. `scale` sharpens the
 * weights so a different prompt shows in the tokens.
 */
export function microCheckpoint(data: Trajectory[], o: { template: string; scale?: number }): Uint8Array {
  const tok = trainBpe(
    data.flatMap((t) => t.turns.flatMap((u) => [u.action, u.observation])),
    { vocabSize: 300 },
  );
  const config = presetConfig('micro', { vocabSize: tok.vocabSize, positions: 'rope', contextLength: 256 });
  const scale = o.scale ?? 1;
  return saveCheckpoint({
    config,
    params: initParams(config, 3).map((x) => scale * x),
    step: 0,
    extraMetadata: { tokenizer: JSON.stringify(tok.toJSON()), spec: JSON.stringify({ stage: 'sft', templates: { [o.template]: 1 } }) },
  });
}
