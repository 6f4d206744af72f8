// Taking the prediction out of a model's raw output (docs/method.md §7). Only the tagged block counts, so
// text the model writes around it (reasoning, self-praise aimed at the judge) never reaches the
// judge or the verifier.

const THINK_TOKEN = /<\/?think(?:ing)?\s*>/gi;
const OBS_TAG = 'predicted_observation';
const OBS_OPEN = `<${OBS_TAG}>`;
const OBS_CLOSE = `</${OBS_TAG}>`;
const MARKER = /^\s*\*\*Environment Observation:?\*\*:?[ \t]*\r?\n?/i;

/**
 * Removes `<think>` blocks the way the public AgentWorldBench parser does: each opener is paired
 * with the next unpaired closer after it (so nested blocks go whole); a closer with no opener
 * removes everything before it (some chat templates put the opener in the prompt, so the output
 * starts mid-thought); an unclosed opener removes the rest of the text, but only up to the
 * first answer tag after it (`stopTags`, e.g. `predicted_observation`), so a model that never
 * closed its thought still has its answer read.
 */
export function stripThink(text: string, stopTags: readonly string[] = []): string {
  if (!/<\/?think/i.test(text)) return text;
  const cuts: [number, number][] = [];
  const pending: number[] = []; // openers not yet paired, oldest first
  let head = 0;
  THINK_TOKEN.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = THINK_TOKEN.exec(text)) !== null) {
    const end = m.index + m[0].length;
    if (m[0][1] !== '/') pending.push(m.index);
    else if (head < pending.length) cuts.push([pending[head++], end]);
    else cuts.push([0, end]);
  }
  if (!cuts.length && head === pending.length) return text;
  const lower = stopTags.length ? text.toLowerCase() : '';
  // Unpaired openers come in increasing order, so each tag's next occurrence only moves forward.
  const next = stopTags.map((t) => ({ tag: `<${t.toLowerCase()}>`, at: -1 }));
  for (const open of pending.slice(head)) {
    let stop = text.length;
    for (const n of next) {
      if (n.at < open) {
        const at = lower.indexOf(n.tag, open);
        n.at = at < 0 ? Infinity : at;
      }
      if (n.at < stop) stop = n.at;
    }
    cuts.push([open, stop]);
  }
  cuts.sort((a, b) => a[0] - b[0]);
  let out = '';
  let last = 0;
  for (const [a, b] of cuts) {
    if (a > last) out += text.slice(last, a);
    last = Math.max(last, b);
  }
  return out + text.slice(last);
}

/**
 * The prediction inside a model output: think blocks removed, the last
 * `<predicted_observation>` block taken (an unclosed last block runs to the end), otherwise the
 * whole text; a leading `**Environment Observation:**` marker removed; outer blank lines trimmed.
 */
export function extractPrediction(raw: string): string {
  const text = stripThink(raw, [OBS_TAG]);
  const lower = text.toLowerCase();
  const open = lower.lastIndexOf(OBS_OPEN);
  let body: string;
  if (open >= 0) {
    const start = open + OBS_OPEN.length;
    const close = lower.indexOf(OBS_CLOSE, start);
    body = close >= 0 ? text.slice(start, close) : text.slice(start);
  } else {
    // A closing tag alone means the opener sat in the prompt: take what precedes it.
    const close = lower.lastIndexOf(OBS_CLOSE);
    body = close >= 0 ? text.slice(0, close) : text;
  }
  body = body.replace(MARKER, '');
  return trimBlankLines(body);
}

/** Trims blank lines and trailing spaces but keeps a first line's indentation (it can matter). */
function trimBlankLines(s: string): string {
  return s.replace(/^(?:[ \t]*\r?\n)+/, '').trimEnd();
}
