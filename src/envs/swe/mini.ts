// Mini: the small language the swe environment's repository is written in. A tokenizer, a
// parser and a tree-walking interpreter with a step budget, so `run_tests` truly executes the
// files the agent edits.

type Val = number | string | boolean | null;
type Expr =
  | { k: 'num' | 'str' | 'bool'; v: Val }
  | { k: 'var'; name: string }
  | { k: 'bin'; op: string; l: Expr; r: Expr }
  | { k: 'un'; op: string; e: Expr }
  | { k: 'call'; name: string; args: Expr[]; line: number };
type Stmt =
  | { k: 'let' | 'set'; name: string; e: Expr }
  | { k: 'if'; c: Expr; then: Stmt[]; else: Stmt[] }
  | { k: 'while'; c: Expr; body: Stmt[] }
  | { k: 'return'; e: Expr | null }
  | { k: 'expr'; e: Expr };
interface Fn {
  params: string[];
  body: Stmt[];
}
export interface TestCase {
  name: string;
  body: Stmt[];
  file: string;
}

export class MiniError extends Error {
  constructor(
    message: string,
    readonly file: string,
    readonly line: number,
  ) {
    super(message);
  }
}

interface Tok {
  t: string;
  v: string;
  line: number;
}
function lex(src: string, file: string): Tok[] {
  const toks: Tok[] = [];
  let line = 1;
  const re = /\s+|\/\/[^\n]*|(\d+(?:\.\d+)?)|"((?:[^"\\\n]|\\.)*)"|([A-Za-z_]\w*)|(==|!=|<=|>=|&&|\|\||[-+*/%<>=!(){},;])|(.)/y;
  let m: RegExpExecArray | null;
  while (re.lastIndex < src.length && (m = re.exec(src))) {
    if (m[1] !== undefined) toks.push({ t: 'num', v: m[1], line });
    else if (m[2] !== undefined) toks.push({ t: 'str', v: m[2].replace(/\\n/g, '\n').replace(/\\(.)/g, '$1'), line });
    else if (m[3] !== undefined) toks.push({ t: 'id', v: m[3], line });
    else if (m[4] !== undefined) toks.push({ t: 'op', v: m[4], line });
    else if (m[5] !== undefined) throw new MiniError(`unexpected character '${m[5]}'`, file, line);
    line += (m[0].match(/\n/g) ?? []).length;
  }
  toks.push({ t: 'eof', v: '', line });
  return toks;
}

const PREC: Record<string, number> = { '||': 1, '&&': 2, '==': 3, '!=': 3, '<': 4, '<=': 4, '>': 4, '>=': 4, '+': 5, '-': 5, '*': 6, '/': 6, '%': 6 };

export function parseProgram(src: string, file: string): { fns: Map<string, Fn>; tests: TestCase[] } {
  const toks = lex(src, file);
  let i = 0;
  const peek = () => toks[i];
  const err = (msg: string): never => {
    throw new MiniError(msg, file, peek().line);
  };
  const eat = (v: string) => {
    if (peek().v !== v || peek().t === 'str') err(`expected '${v}' but found '${peek().v || 'end of file'}'`);
    return toks[i++];
  };
  const ident = () => (peek().t === 'id' ? toks[i++].v : err(`expected a name but found '${peek().v || 'end of file'}'`));
  const primary = (): Expr => {
    const t = toks[i++];
    if (t.t === 'num') return { k: 'num', v: Number(t.v) };
    if (t.t === 'str') return { k: 'str', v: t.v };
    if (t.t === 'id') {
      if (t.v === 'true' || t.v === 'false') return { k: 'bool', v: t.v === 'true' };
      if (peek().v === '(') {
        i++;
        const args: Expr[] = [];
        if (peek().v !== ')') {
          args.push(expr(0));
          while (peek().v === ',') {
            i++;
            args.push(expr(0));
          }
        }
        eat(')');
        return { k: 'call', name: t.v, args, line: t.line };
      }
      return { k: 'var', name: t.v };
    }
    if (t.v === '(') {
      const e = expr(0);
      eat(')');
      return e;
    }
    if (t.v === '-' || t.v === '!') return { k: 'un', op: t.v, e: primary() };
    i--;
    return err(`unexpected '${t.v || 'end of file'}'`);
  };
  const expr = (min: number): Expr => {
    let l = primary();
    while (peek().t === 'op' && PREC[peek().v] !== undefined && PREC[peek().v] > min) {
      const op = toks[i++].v;
      l = { k: 'bin', op, l, r: expr(PREC[op]) };
    }
    return l;
  };
  const block = (): Stmt[] => {
    eat('{');
    const out: Stmt[] = [];
    while (peek().v !== '}') {
      if (peek().t === 'eof') err("expected '}'");
      out.push(stmt());
    }
    eat('}');
    return out;
  };
  const stmt = (): Stmt => {
    const t = peek();
    if (t.t === 'id' && t.v === 'let') {
      i++;
      const name = ident();
      eat('=');
      const e = expr(0);
      eat(';');
      return { k: 'let', name, e };
    }
    if (t.t === 'id' && t.v === 'if') {
      i++;
      eat('(');
      const c = expr(0);
      eat(')');
      const then = block();
      let els: Stmt[] = [];
      if (peek().v === 'else') {
        i++;
        els = peek().v === 'if' ? [stmt()] : block();
      }
      return { k: 'if', c, then, else: els };
    }
    if (t.t === 'id' && t.v === 'while') {
      i++;
      eat('(');
      const c = expr(0);
      eat(')');
      return { k: 'while', c, body: block() };
    }
    if (t.t === 'id' && t.v === 'return') {
      i++;
      const e = peek().v === ';' ? null : expr(0);
      eat(';');
      return { k: 'return', e };
    }
    if (t.t === 'id' && toks[i + 1].v === '=') {
      i += 2;
      const e = expr(0);
      eat(';');
      return { k: 'set', name: t.v, e };
    }
    const e = expr(0);
    eat(';');
    return { k: 'expr', e };
  };
  const fns = new Map<string, Fn>();
  const tests: TestCase[] = [];
  while (peek().t !== 'eof') {
    const kw = ident();
    if (kw === 'fn') {
      const name = ident();
      eat('(');
      const params: string[] = [];
      if (peek().v !== ')') {
        params.push(ident());
        while (peek().v === ',') {
          i++;
          params.push(ident());
        }
      }
      eat(')');
      fns.set(name, { params, body: block() });
    } else if (kw === 'test') {
      if (peek().t !== 'str') err('expected the test name as a string');
      const name = toks[i++].v;
      tests.push({ name, body: block(), file });
    } else err(`expected 'fn' or 'test' but found '${kw}'`);
  }
  return { fns, tests };
}

class Return {
  constructor(readonly v: Val) {}
}
const show = (v: Val) => (typeof v === 'string' ? JSON.stringify(v) : String(v));

/** Runs one test against the program's functions; returns null or the failure message. */
export function runTest(fns: Map<string, Fn>, test: TestCase, budget = 100_000): string | null {
  let steps = 0;
  const tick = (line: number) => {
    if (++steps > budget) throw new MiniError('step budget exceeded (infinite loop?)', test.file, line);
  };
  const evalExpr = (e: Expr, env: Map<string, Val>): Val => {
    switch (e.k) {
      case 'num':
      case 'str':
      case 'bool':
        return e.v;
      case 'var':
        if (!env.has(e.name)) throw new MiniError(`undefined variable '${e.name}'`, test.file, 0);
        return env.get(e.name)!;
      case 'un': {
        const v = evalExpr(e.e, env);
        return e.op === '-' ? -(v as number) : !v;
      }
      case 'bin': {
        if (e.op === '&&') return evalExpr(e.l, env) && evalExpr(e.r, env);
        if (e.op === '||') return evalExpr(e.l, env) || evalExpr(e.r, env);
        const l = evalExpr(e.l, env) as number,
          r = evalExpr(e.r, env) as number;
        switch (e.op) {
          case '+':
            return typeof l === 'string' || typeof r === 'string' ? String(l) + String(r) : l + r;
          case '-':
            return l - r;
          case '*':
            return l * r;
          case '/':
            if (r === 0) throw new MiniError('division by zero', test.file, 0);
            return Math.trunc(l / r);
          case '%':
            return l % r;
          case '==':
            return l === r;
          case '!=':
            return l !== r;
          case '<':
            return l < r;
          case '<=':
            return l <= r;
          case '>':
            return l > r;
          default:
            return l >= r;
        }
      }
      case 'call': {
        tick(e.line);
        const args = e.args.map((a) => evalExpr(a, env));
        if (e.name === 'assert_eq') {
          if (args[0] !== args[1]) throw new MiniError(`assert_eq failed: left ${show(args[0])}, right ${show(args[1])}`, test.file, e.line);
          return null;
        }
        if (e.name === 'assert') {
          if (!args[0]) throw new MiniError('assert failed', test.file, e.line);
          return null;
        }
        if (e.name === 'len') return String(args[0]).length;
        if (e.name === 'str') return String(args[0]);
        const f = fns.get(e.name);
        if (!f) throw new MiniError(`undefined function '${e.name}'`, test.file, e.line);
        if (f.params.length !== args.length) throw new MiniError(`${e.name}() takes ${f.params.length} arguments, got ${args.length}`, test.file, e.line);
        try {
          run(f.body, new Map(f.params.map((p, k) => [p, args[k]])));
        } catch (x) {
          if (x instanceof Return) return x.v;
          throw x;
        }
        return null;
      }
    }
  };
  const run = (body: Stmt[], env: Map<string, Val>): void => {
    for (const s of body) {
      tick(0);
      if (s.k === 'let' || s.k === 'set') {
        if (s.k === 'set' && !env.has(s.name)) throw new MiniError(`assignment to undeclared variable '${s.name}'`, test.file, 0);
        env.set(s.name, evalExpr(s.e, env));
      } else if (s.k === 'if') run(evalExpr(s.c, env) ? s.then : s.else, env);
      else if (s.k === 'while') {
        while (evalExpr(s.c, env)) {
          tick(0);
          run(s.body, env);
        }
      } else if (s.k === 'return') throw new Return(s.e ? evalExpr(s.e, env) : null);
      else evalExpr(s.e, env);
    }
  };
  try {
    run(test.body, new Map());
    return null;
  } catch (x) {
    if (x instanceof MiniError) return `${x.message}${x.line ? ` (${x.file}:${x.line})` : ''}`;
    if (x instanceof Return) return null;
    throw x;
  }
}
