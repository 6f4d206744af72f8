// grep's regular expressions, POSIX basic (BRE) and extended (-E, ERE) with the GNU extensions
// (\w \W \s \S \b \B \< \>, BRE \+ \? \|), matched by a Thompson NFA simulated one character at a
// time: O(pattern × line) steps, never exponential, whatever the user types. A JavaScript RegExp
// backtracks (`(a*)*b` against 30 a's takes seconds), so none is built from user text.
// Patterns too large to compile (counted repetitions multiply) or matching that would run past a
// step budget end with grep's own messages instead of a hang. Back-references cannot be matched
// in linear time and are refused with a message.

export class RegexError extends Error {}

/** The most NFA states one pattern may compile to ("Regular expression too big" past it). */
export const MAX_STATES = 10_000;
/** Groups inside groups, and repetitions of repetitions, before "Regular expression too big". */
const MAX_NESTING = 500;
/** RE_DUP_MAX: the largest count in `{m,n}`. */
const DUP_MAX = 32767;

type CharTest = (c: string) => boolean;
type Assertion = 'bol' | 'eol' | 'word' | 'notword' | 'wordstart' | 'wordend';
type Node =
  | { t: 'char'; test: CharTest }
  | { t: 'cat'; items: Node[] }
  | { t: 'alt'; alts: Node[] }
  | { t: 'rep'; node: Node; min: number; max: number }
  | { t: 'assert'; kind: Assertion };

const isWordChar = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{N}_]/u.test(c);
const CLASSES: Record<string, CharTest> = {
  alpha: (c) => /\p{L}/u.test(c),
  digit: (c) => c >= '0' && c <= '9',
  alnum: (c) => /[\p{L}\p{N}]/u.test(c),
  upper: (c) => /\p{Lu}/u.test(c),
  lower: (c) => /\p{Ll}/u.test(c),
  space: (c) => /\s/.test(c),
  blank: (c) => c === ' ' || c === '\t',
  punct: (c) => /[!-/:-@[-`{-~]/.test(c),
  print: (c) => c >= ' ' && c !== '\x7f',
  graph: (c) => c > ' ' && c !== '\x7f',
  cntrl: (c) => c < ' ' || c === '\x7f',
  xdigit: (c) => /[0-9a-fA-F]/.test(c),
};

class Parser {
  private i = 0;
  groups = 0;
  constructor(
    private readonly src: string,
    private readonly ere: boolean,
  ) {}

  parse(): Node {
    const n = this.alt(0);
    if (this.i < this.src.length) throw new RegexError('Unmatched ) or \\)');
    return n;
  }

  private peek(k = 0): string | undefined {
    return this.src[this.i + k];
  }
  /** The next token is `op`: in ERE the bare character, in BRE the escaped one (`\|`, `\)`). */
  private isOp(op: string): boolean {
    return this.ere ? this.peek() === op : this.peek() === '\\' && this.peek(1) === op;
  }
  private eatOp(): void {
    this.i += this.ere ? 1 : 2;
  }

  private alt(depth: number): Node {
    if (depth > MAX_NESTING) throw new RegexError('Regular expression too big');
    const alts = [this.cat(depth)];
    while (this.isOp('|')) {
      this.eatOp();
      alts.push(this.cat(depth));
    }
    return alts.length === 1 ? alts[0] : { t: 'alt', alts };
  }

  private cat(depth: number): Node {
    const items: Node[] = [];
    const start = this.i;
    for (;;) {
      const c = this.peek();
      if (c === undefined || this.isOp('|') || (depth > 0 && this.isOp(')'))) break;
      if (depth === 0 && this.isOp(')')) throw new RegexError('Unmatched ) or \\)');
      let atom: Node;
      if (c === '^' && (this.ere || this.i === start)) {
        this.i++;
        atom = { t: 'assert', kind: 'bol' };
      } else if (c === '$' && (this.ere || this.atBranchEnd(depth))) {
        this.i++;
        atom = { t: 'assert', kind: 'eol' };
      } else if (c === '*' && (items.length === 0 || (items.length === 1 && items[0].t === 'assert' && items[0].kind === 'bol'))) {
        // A leading `*` is an ordinary character.
        this.i++;
        atom = lit('*');
      } else atom = this.atom(depth);
      items.push(this.quantified(atom));
    }
    return items.length === 1 ? items[0] : { t: 'cat', items };
  }

  /** In BRE `$` is an anchor only at the end of a branch. */
  private atBranchEnd(depth: number): boolean {
    const rest = this.src.slice(this.i + 1);
    return rest === '' || rest.startsWith('\\|') || (depth > 0 && rest.startsWith('\\)'));
  }

  private atom(depth: number): Node {
    const c = this.src[this.i];
    if (this.isOp('(')) {
      this.eatOp();
      this.groups++;
      const inner = this.alt(depth + 1);
      if (!this.isOp(')')) throw new RegexError('Unmatched ( or \\(');
      this.eatOp();
      return inner;
    }
    if (this.ere && (c === '*' || c === '+' || c === '?' || (c === '{' && /^\{\d/.test(this.src.slice(this.i))))) {
      // ERE: a repetition with nothing before it (`a|*b`, `(+x)`) matches the character itself in GNU grep.
      this.i++;
      return lit(c);
    }
    if (c === '[') return this.bracket();
    if (c === '.') {
      this.i++;
      return { t: 'char', test: () => true };
    }
    if (c === '\\') return this.escape();
    const ch = String.fromCodePoint(this.src.codePointAt(this.i)!);
    this.i += ch.length;
    return lit(ch);
  }

  private escape(): Node {
    if (this.i + 1 >= this.src.length) throw new RegexError('Trailing backslash');
    const e = String.fromCodePoint(this.src.codePointAt(this.i + 1)!);
    this.i += 1 + e.length;
    switch (e) {
      case 'w':
        return { t: 'char', test: (c) => isWordChar(c) };
      case 'W':
        return { t: 'char', test: (c) => !isWordChar(c) };
      case 's':
        return { t: 'char', test: (c) => /\s/.test(c) };
      case 'S':
        return { t: 'char', test: (c) => !/\s/.test(c) };
      case 'b':
        return { t: 'assert', kind: 'word' };
      case 'B':
        return { t: 'assert', kind: 'notword' };
      case '<':
        return { t: 'assert', kind: 'wordstart' };
      case '>':
        return { t: 'assert', kind: 'wordend' };
      case '`':
        return { t: 'assert', kind: 'bol' };
      case "'":
        return { t: 'assert', kind: 'eol' };
    }
    if (e >= '1' && e <= '9') {
      if (Number(e) > this.groups) throw new RegexError('Invalid back reference');
      throw new RegexError('back-references are not supported (patterns are matched in linear time)');
    }
    if (!this.ere && (e === '{' || e === '}')) throw new RegexError('Invalid preceding regular expression');
    return lit(e);
  }

  private bracket(): Node {
    const src = this.src;
    let i = this.i + 1;
    const neg = src[i] === '^';
    if (neg) i++;
    const tests: CharTest[] = [];
    let first = true;
    for (;;) {
      if (i >= src.length) throw new RegexError('Unmatched [, [^, [:, [., or [=');
      const c = src[i];
      if (c === ']' && !first) break;
      first = false;
      if (c === '[' && (src[i + 1] === ':' || src[i + 1] === '=' || src[i + 1] === '.')) {
        const kind = src[i + 1];
        const end = src.indexOf(kind + ']', i + 2);
        if (end < 0) throw new RegexError('Unmatched [, [^, [:, [., or [=');
        const name = src.slice(i + 2, end);
        i = end + 2;
        if (kind === ':') {
          const cls = Object.hasOwn(CLASSES, name) ? CLASSES[name] : undefined;
          if (!cls) throw new RegexError('Invalid character class name');
          tests.push(cls);
        } else {
          if ([...name].length !== 1) throw new RegexError('Invalid collation character');
          tests.push((x) => x === name);
        }
        continue;
      }
      const lo = String.fromCodePoint(src.codePointAt(i)!);
      i += lo.length;
      if (src[i] === '-' && src[i + 1] !== undefined && src[i + 1] !== ']') {
        const hi = String.fromCodePoint(src.codePointAt(i + 1)!);
        i += 1 + hi.length;
        if (hi.codePointAt(0)! < lo.codePointAt(0)!) throw new RegexError('Invalid range end');
        tests.push((x) => x >= lo && x <= hi);
      } else tests.push((x) => x === lo);
    }
    this.i = i + 1;
    return { t: 'char', test: (c) => tests.some((f) => f(c)) !== neg };
  }

  private quantified(atom: Node): Node {
    let stacked = 0;
    for (;;) {
      const c = this.peek();
      let min: number;
      let max: number;
      if (c === '*') {
        this.i++;
        [min, max] = [0, Infinity];
      } else if (this.isOp('+')) {
        this.eatOp();
        [min, max] = [1, Infinity];
      } else if (this.isOp('?')) {
        this.eatOp();
        [min, max] = [0, 1];
      } else if (this.isOp('{') && (!this.ere || /^\{\d*(,\d*)?\}/.test(this.src.slice(this.i)))) {
        this.eatOp();
        [min, max] = this.interval();
      } else return atom;
      if (atom.t === 'rep' && atom.max === Infinity && atom.min <= 1 && max === Infinity) {
        // `a**`, `(a+)*`: the same as one repetition, and no deeper to compile.
        atom = { t: 'rep', node: atom.node, min: min * atom.min, max };
        continue;
      }
      if (++stacked > MAX_NESTING) throw new RegexError('Regular expression too big');
      atom = { t: 'rep', node: atom, min, max };
    }
  }

  private interval(): [number, number] {
    const close = this.ere ? '}' : '\\}';
    const end = this.src.indexOf(close, this.i);
    if (end < 0) throw new RegexError(this.ere ? 'Unmatched { or \\{' : 'Unmatched \\{');
    const m = /^(\d*)(,(\d*))?$/.exec(this.src.slice(this.i, end));
    this.i = end + close.length;
    if (!m || (m[1] === '' && !m[2])) throw new RegexError('Invalid content of \\{\\}');
    const min = m[1] === '' ? 0 : Number(m[1]);
    const max = m[2] ? (m[3] === '' ? Infinity : Number(m[3])) : min;
    if (min > max || min > DUP_MAX || (max !== Infinity && max > DUP_MAX)) throw new RegexError('Invalid content of \\{\\}');
    return [min, max];
  }
}

const lit = (ch: string): Node => ({ t: 'char', test: (c) => c === ch });

// The NFA: states in an array, `out` / `out1` indexes into it (-1: not yet patched).
type State =
  | { k: 'char'; test: CharTest; out: number }
  | { k: 'split'; out: number; out1: number }
  | { k: 'assert'; kind: Assertion; out: number }
  | { k: 'match' };

class Builder {
  states: State[] = [];
  private add(s: State): number {
    if (this.states.length >= MAX_STATES) throw new RegexError('Regular expression too big');
    this.states.push(s);
    return this.states.length - 1;
  }
  /** Compiles `n`; returns its start state and the dangling exits to patch to what follows. */
  build(n: Node): { start: number; exits: [number, 'out' | 'out1'][] } {
    switch (n.t) {
      case 'char': {
        const s = this.add({ k: 'char', test: n.test, out: -1 });
        return { start: s, exits: [[s, 'out']] };
      }
      case 'assert': {
        const s = this.add({ k: 'assert', kind: n.kind, out: -1 });
        return { start: s, exits: [[s, 'out']] };
      }
      case 'cat': {
        if (!n.items.length) return this.empty();
        let first = this.build(n.items[0]);
        for (const item of n.items.slice(1)) {
          const next = this.build(item);
          this.patch(first.exits, next.start);
          first = { start: first.start, exits: next.exits };
        }
        return first;
      }
      case 'alt': {
        const parts = n.alts.map((a) => this.build(a));
        let start = parts[parts.length - 1].start;
        for (let i = parts.length - 2; i >= 0; i--) start = this.add({ k: 'split', out: parts[i].start, out1: start });
        return { start, exits: parts.flatMap((p) => p.exits) };
      }
      case 'rep': {
        // x{m,n} = m copies of x, then n-m optional ones (or x* when n is unbounded).
        const pieces: { start: number; exits: [number, 'out' | 'out1'][] }[] = [];
        for (let i = 0; i < n.min; i++) pieces.push(this.build(n.node));
        if (n.max === Infinity) {
          const body = this.build(n.node);
          const split = this.add({ k: 'split', out: body.start, out1: -1 });
          this.patch(body.exits, split);
          pieces.push({ start: split, exits: [[split, 'out1']] });
        } else {
          for (let i = n.min; i < n.max; i++) {
            const body = this.build(n.node);
            const split = this.add({ k: 'split', out: body.start, out1: -1 });
            pieces.push({ start: split, exits: [...body.exits, [split, 'out1']] });
          }
        }
        if (!pieces.length) return this.empty();
        for (let i = 1; i < pieces.length; i++) this.patch(pieces[i - 1].exits, pieces[i].start);
        return { start: pieces[0].start, exits: pieces[pieces.length - 1].exits };
      }
    }
  }
  private empty() {
    const s = this.add({ k: 'split', out: -1, out1: -1 });
    return {
      start: s,
      exits: [
        [s, 'out'],
        [s, 'out1'],
      ] as [number, 'out' | 'out1'][],
    };
  }
  private patch(exits: [number, 'out' | 'out1'][], to: number): void {
    for (const [s, f] of exits) (this.states[s] as unknown as Record<string, number>)[f] = to;
  }
}

export interface GrepRegex {
  /** Whether the pattern matches anywhere in `text`; throws RegexError when the step budget runs out. */
  test(text: string): boolean;
  /** Steps taken so far, across every test (state visits). */
  steps: number;
}

export interface RegexOptions {
  extended?: boolean;
  ignoreCase?: boolean;
  /** -w: the match must be a whole word. */
  word?: boolean;
  /** Total steps allowed across every test before "memory exhausted". Default 10^8. */
  budget?: number;
}

/** A compiled pattern plus the search's scratch space, which lives as long as the GrepRegex. */
interface Program {
  states: State[];
  start: number;
  fold: boolean;
  budget: number;
  /** Generation marks instead of clearing sets: `mark[s] === gen` means s is already in the list. */
  mark: Int32Array;
  gen: number;
}

/** Whether a zero-width assertion holds before chars[i]. */
function assertionHolds(kind: Assertion, chars: string[], i: number): boolean {
  const before = isWordChar(chars[i - 1]);
  const after = isWordChar(chars[i]);
  switch (kind) {
    case 'bol':
      return i === 0;
    case 'eol':
      return i === chars.length;
    case 'word':
      return before !== after;
    case 'notword':
      return before === after;
    case 'wordstart':
      return !before && after;
    case 'wordend':
      return before && !after;
  }
}

/** Follows splits and assertions from s0 at position i into `list`; true when the match state is reached. */
function addState(p: Program, re: GrepRegex, chars: string[], list: number[], s0: number, i: number, stack: number[]): boolean {
  stack.push(s0);
  while (stack.length) {
    const s = stack.pop()!;
    if (s < 0 || p.mark[s] === p.gen) continue;
    p.mark[s] = p.gen;
    if (++re.steps > p.budget) throw new RegexError('memory exhausted');
    const st = p.states[s];
    if (st.k === 'match') {
      stack.length = 0;
      return true;
    }
    if (st.k === 'split') stack.push(st.out1, st.out);
    else if (st.k === 'assert') {
      if (assertionHolds(st.kind, chars, i)) stack.push(st.out);
    } else list.push(s);
  }
  return false;
}

/** Runs the NFA over `text` in lockstep (unanchored); counts steps on `re`. */
function search(p: Program, re: GrepRegex, text: string): boolean {
  const chars = Array.from(text);
  let cur: number[] = [];
  let next: number[] = [];
  const stack: number[] = [];
  p.gen++;
  for (let i = 0; ; i++) {
    // Unanchored search: a match may start at every position.
    if (addState(p, re, chars, cur, p.start, i, stack)) return true;
    if (i === chars.length || !cur.length) {
      if (i === chars.length) return false;
      p.gen++;
      continue;
    }
    const c = chars[i];
    const lower = p.fold ? c.toLowerCase() : c;
    const upper = p.fold ? c.toUpperCase() : c;
    p.gen++;
    next.length = 0;
    for (const s of cur) {
      const st = p.states[s] as { k: 'char'; test: CharTest; out: number };
      if (++re.steps > p.budget) throw new RegexError('memory exhausted');
      if (st.test(c) || (p.fold && (st.test(lower) || st.test(upper)))) {
        if (addState(p, re, chars, next, st.out, i + 1, stack)) return true;
      }
    }
    [cur, next] = [next, cur];
  }
}

/** Compiles a grep pattern; throws RegexError with grep's message when it is not valid. */
export function compileGrep(pattern: string, options: RegexOptions = {}): GrepRegex {
  let node = new Parser(pattern, !!options.extended).parse();
  if (options.word) node = { t: 'cat', items: [{ t: 'assert', kind: 'wordstart' }, node, { t: 'assert', kind: 'wordend' }] };
  const b = new Builder();
  const built = b.build(node);
  const states = b.states;
  const match = states.length;
  states.push({ k: 'match' });
  for (const [s, f] of built.exits) (states[s] as unknown as Record<string, number>)[f] = match;
  const p: Program = {
    states,
    start: built.start,
    fold: !!options.ignoreCase,
    budget: options.budget ?? 1e8,
    mark: new Int32Array(states.length).fill(-1),
    gen: 0,
  };
  const re: GrepRegex = {
    steps: 0,
    test: (text: string): boolean => search(p, re, text),
  };
  return re;
}
