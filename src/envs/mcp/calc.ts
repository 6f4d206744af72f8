// The calculator tool's arithmetic: a recursive-descent parser, no eval.

/** The value of an expression, or the error message a calculator would show. */
export function evaluate(src: string): number | string {
  const toks = src.match(/\d+(?:\.\d+)?|[A-Za-z]+|\S/g) ?? [];
  let i = 0;
  const fail = (m: string): never => {
    throw new Error(m);
  };
  const peek = () => toks[i];
  const expr = (): number => {
    let v = term();
    while (peek() === '+' || peek() === '-') v = toks[i++] === '+' ? v + term() : v - term();
    return v;
  };
  const term = (): number => {
    let v = power();
    while (peek() === '*' || peek() === '/' || peek() === '%') {
      const op = toks[i++];
      const r = power();
      if ((op === '/' || op === '%') && r === 0) fail('Division by zero');
      v = op === '*' ? v * r : op === '/' ? v / r : v % r;
    }
    return v;
  };
  const power = (): number => {
    const b = unary();
    if (peek() === '^') {
      i++;
      return b ** power();
    }
    return b;
  };
  const unary = (): number => (peek() === '-' ? (i++, -unary()) : atom());
  const atom = (): number => {
    const t = toks[i++];
    if (t === undefined) return fail('Unexpected end of expression');
    if (t === '(') {
      const v = expr();
      if (toks[i++] !== ')') fail("Expected ')'");
      return v;
    }
    if (t === 'sqrt') {
      if (toks[i++] !== '(') fail("Expected '(' after sqrt");
      const v = expr();
      if (toks[i++] !== ')') fail("Expected ')'");
      if (v < 0) fail('Square root of a negative number');
      return Math.sqrt(v);
    }
    if (/^\d/.test(t)) return Number(t);
    return fail(`Unexpected token '${t}'`);
  };
  try {
    const v = expr();
    if (i < toks.length) fail(`Unexpected token '${toks[i]}'`);
    // Round away binary noise (0.1 + 0.2) the way a calculator display does.
    return Number.parseFloat(v.toPrecision(12));
  } catch (e) {
    return (e as Error).message;
  }
}
