// Taking the prediction out of a model's raw output (SPEC §7). Only the tagged block counts, so
// text the model writes around it (reasoning, self-praise aimed at the judge) never reaches the
// judge or the verifier.

const THINK_TOKEN = /<\/?think(?:ing)?\s*>/gi;
const OBS_OPEN = '<predicted_observation>';
const OBS_CLOSE = '</predicted_observation>';
const MARKER = /^\s*\*\*Environment Observation:?\*\*:?[ \t]*\r?\n?/i;

/**
 * Removes `<think>` blocks, nested ones included. An unclosed `<think>` swallows the rest of the
 * text (the model never finished thinking, so nothing after it is an answer). A stray closing
 * tag with no opener drops everything before it: some chat templates put the opener in the
 * prompt, so the output starts mid-thought.
 */
export function stripThink(text: string): string {
  if (!/<\/?think/i.test(text)) return text;
  let out = '';
  let depth = 0;
  let last = 0;
  THINK_TOKEN.lastIndex = 0;
  let m: RegExpExecArray | null;
  let sawOpen = false;
  while ((m = THINK_TOKEN.exec(text)) !== null) {
    const closing = m[0][1] === '/';
    if (!closing) {
      if (depth === 0) out += text.slice(last, m.index);
      depth++;
      sawOpen = true;
    } else if (depth > 0) {
      depth--;
      if (depth === 0) last = m.index + m[0].length;
    } else {
      // A closer with no opener: the thought began before the output did.
      out = sawOpen ? out + text.slice(last, m.index) : '';
      last = m.index + m[0].length;
    }
  }
  if (depth === 0) out += text.slice(last);
  return out;
}

/**
 * The prediction inside a model output: think blocks removed, the last
 * `<predicted_observation>` block taken (an unclosed last block runs to the end), otherwise the
 * whole text; a leading `**Environment Observation:**` marker removed; outer blank lines trimmed.
 */
export function extractPrediction(raw: string): string {
  const text = stripThink(raw);
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
  return s.replace(/^(?:[ \t]*\r?\n)+/, '').replace(/\s+$/, '');
}
