// `lwm optimize`'s progress on standard error: which version is being scored on which split, how
// far, and an estimate of the time left (from this process's rate over the samples still
// planned). At most one line a second, and one at the end of each evaluation.
import type { CliIO } from '../io.ts';
import type { LoopState } from '../../core/optimize/loop.ts';

/** The version a text being scored belongs to, as the loop is about to score it. */
function labelOf(s: LoopState, text: string, split: 'dev' | 'test'): string {
  if (split === 'test') return `${s.best} (best)`;
  if (!s.best) return 'v0';
  const id = s.pending[0];
  return id && s.versions.find((v) => v.id === id)?.text === text ? id : (s.versions.findLast((v) => v.text === text)?.id ?? 'candidate');
}

/** Samples the run still plans to score, the evaluation in progress included. */
function samplesLeft(s: LoopState): number {
  const c = s.config;
  const proposed = s.versions.some((v) => v.round === s.round + 1);
  const roundsLeft = Math.max(0, c.rounds - s.round - (proposed ? 1 : 0));
  const evals = (s.best ? 0 : 1) + s.pending.length + roundsLeft * c.candidates;
  return evals * c.devSize + (c.testSize > 0 && !s.test ? c.testSize : 0);
}

export function progressLine(io: CliIO, s: LoopState) {
  const t0 = Date.now();
  let scored = 0;
  let last = 0;
  let label = '';
  let split: 'dev' | 'test' = 'dev';
  let plannedAtBegin = 0;
  return {
    begin(text: string, which: 'dev' | 'test') {
      label = labelOf(s, text, which);
      split = which;
      plannedAtBegin = samplesLeft(s);
    },
    sample(_split: 'dev' | 'test', done: number, total: number, failed: number) {
      scored++;
      const now = Date.now();
      if (done < total && now - last < 1000) return;
      last = now;
      const rate = scored / Math.max(0.001, (now - t0) / 1000);
      const left = Math.max(0, plannedAtBegin - done);
      const round = split === 'test' ? 'test' : s.best ? `round ${Math.min(s.round + 1, s.config.rounds)}/${s.config.rounds}` : 'start';
      io.err(
        `lwm optimize: ${round} ${label} on ${split}: ${done}/${total}${failed ? ` (${failed} failed)` : ''}; ${s.calls.model + done} model calls; ETA ~${Math.ceil(left / rate)}s\n`,
      );
    },
  };
}
