// How much of the model's context the prompt takes (system prompt, history, action, room left for
// the answer) and what the truncation policy cut to make it fit.
import { cutSummary, type ContextReport } from '../../../core/playground/context.ts';

export function ContextBar({ report }: { report: ContextReport | null }) {
  if (!report) return <p className="small muted">The context bar fills in with the next generation (a baseline has no context).</p>;
  const total = report.context ?? Math.max(report.prompt + report.maxTokens, 1);
  const pct = (n: number) => `${Math.min(100, (100 * n) / total)}%`;
  const approx = report.exact ? '' : '≈';
  const cut = cutSummary(report);
  const desc = `${approx}${report.prompt} prompt tokens (system ${approx}${report.system}, history ${approx}${report.history}, action ${approx}${report.action}) and ${report.maxTokens} for the answer${report.context ? ` in a context of ${report.context}` : ' (context unknown)'}`;
  return (
    <div className="pg-context" data-testid="context-bar">
      <div className="pg-bar" role="img" aria-label={desc}>
        <span className="pg-seg pg-system-c" style={{ width: pct(report.system) }} />
        <span className="pg-seg pg-history-c" style={{ width: pct(report.history) }} />
        <span className="pg-seg pg-action-c" style={{ width: pct(report.action) }} />
        <span className="pg-seg pg-answer-c" style={{ width: pct(report.maxTokens) }} />
      </div>
      <p className="small">
        <span className="pg-key pg-system-c" /> system {approx}
        {report.system} · <span className="pg-key pg-history-c" /> history {approx}
        {report.history} · <span className="pg-key pg-action-c" /> action {approx}
        {report.action} · <span className="pg-key pg-answer-c" /> answer ≤ {report.maxTokens} ·{' '}
        {report.context ? `context ${report.context}` : 'context unknown (set it in the endpoint settings)'}
        {report.exact ? '' : ' — estimated: the page does not have the endpoint’s tokenizer'}
      </p>
      {cut ? (
        <p className="callout warn small" role="status" data-testid="context-cut">
          {cut}
        </p>
      ) : null}
      {report.text ? (
        <details className="small">
          <summary>What the model saw</summary>
          <pre className="preview">{report.text}</pre>
        </details>
      ) : null}
    </div>
  );
}
