// The backends of a bench that could not run in its last attempt, each with why and what to do
// (what CORS is and how vLLM, Ollama and SGLang allow this page; a checkpoint without its
// tokenizer or template; no WebGPU): the same words as the Playground's error callout.
import { backendHelp, backendProblemTitle } from '../../lib/backendHelp.ts';
import { ProblemHelp } from '../../components/ProblemHelp.tsx';
import type { BenchRecord } from '../../../core/records.ts';

export function BackendProblems({ bench }: { bench: BenchRecord }) {
  const problems = bench.backendProblems ?? {};
  const failed = bench.backends.filter((b) => problems[b.id]);
  if (!failed.length) return null;
  return (
    <section aria-labelledby="bench-problems-title" data-testid="bench-backend-problems">
      <h3 id="bench-problems-title">Backends that could not run</h3>
      <ul className="plain">
        {failed.map((b) => {
          const p = problems[b.id];
          return (
            <li key={b.id} className="callout error" role="alert" data-testid="bench-backend-problem" data-backend={b.name} data-kind={p.kind}>
              <p>
                <strong>{b.name}</strong>: {backendProblemTitle(p.kind)}
              </p>
              <p className="small">{p.message}</p>
              <ProblemHelp help={backendHelp(p.kind)} open={p.kind === 'cors' || p.kind === 'unreachable'} />
            </li>
          );
        })}
      </ul>
    </section>
  );
}
