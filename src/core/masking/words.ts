// Word extraction for the masking metrics (docs/method.md §4).
//
// Rules, in order:
//  1. The text is NFKC-normalised and lower-cased (so "Ｆｉｌｅ" and "FILE" both give "file").
//  2. A word is a maximal run of letters (\p{L}), combining marks (\p{M}), digits (\p{N}) and
//     connector punctuation (\p{Pc}, e.g. "_"), so identifiers such as `my_file` stay whole.
//  3. Every other character separates words: spaces, all other punctuation ("." "/" "-" "'"
//     "\"" ":" ...), symbols and control characters. `/home/user/a.txt` gives home, user, a, txt.
//  4. Characters of scripts written without spaces (Han, Hiragana, Katakana) are one word each,
//     so a Chinese or Japanese sentence does not collapse into a single "word".
//  5. Runs made only of connector punctuation ("___") are not words.
// Word sets, not lists, enter the metrics: repeats do not count twice.

const WORD = /[\p{L}\p{M}\p{N}\p{Pc}]+/gu;
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const UNSPACED_G = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu;
const ONLY_CONNECTORS = /^\p{Pc}+$/u;

/** The words of `text`, in order, with repeats. */
export function extractWords(text: string): string[] {
  const out: string[] = [];
  const norm = text.normalize('NFKC').toLowerCase();
  for (const m of norm.matchAll(WORD)) {
    const w = m[0];
    if (ONLY_CONNECTORS.test(w)) continue;
    if (!UNSPACED.test(w)) {
      out.push(w);
      continue;
    }
    // Split out each unspaced-script character; the rest of the run stays together.
    let last = 0;
    for (const c of w.matchAll(UNSPACED_G)) {
      const before = w.slice(last, c.index);
      if (before && !ONLY_CONNECTORS.test(before)) out.push(before);
      out.push(c[0]);
      last = c.index! + c[0].length;
    }
    const tail = w.slice(last);
    if (tail && !ONLY_CONNECTORS.test(tail)) out.push(tail);
  }
  return out;
}

export function wordSet(text: string): Set<string> {
  return new Set(extractWords(text));
}

/** Length in Unicode code points, so R does not depend on how a script is encoded in UTF-16. */
export function codePointLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}
