import { describe, expect, it } from 'vitest';
import { shellCommand, verify, type VerifierInput } from './verifier.ts';

function v(extra: Partial<VerifierInput>) {
  return verify({ domain: 'terminal', history: [], action: '', reference: '', prediction: '', ...extra });
}

describe('verifier with span labels', () => {
  const ref = 'Created order 17\nETA: 2024-05-01 10:00\nTotal: $42.00';
  const eta = ref.indexOf('ETA');
  const total = ref.indexOf('Total');
  const spans = [
    { start: 0, end: eta, kind: 'deterministic' as const },
    { start: eta, end: total, kind: 'runtime_metadata' as const },
    { start: total, end: ref.length, kind: 'deterministic' as const },
  ];
  it('passes when the deterministic regions match exactly and free text differs', () => {
    const r = v({ reference: ref, spans, prediction: 'Created order 17\nETA: 2030-01-01 00:00\nTotal: $42.00\n' });
    expect(r).toMatchObject({ pass: true, applicable: true, rule: 'spans' });
    expect(r.regions.map((x) => x.label)).toEqual([`span [0, ${eta})`, `span [${total}, ${ref.length})`]);
  });
  it('reports which region failed and why', () => {
    const r = v({ reference: ref, spans, prediction: 'Created order 17\nETA: soon\nTotal: $41.00' });
    expect(r.pass).toBe(false);
    expect(r.failure).toEqual({
      region: { label: `span [${total}, ${ref.length})`, expected: 'Total: $42.00' },
      reason: 'the prediction does not end with this text',
    });
  });
  it('anchors a region at the start of the observation', () => {
    const r = v({ reference: ref, spans, prediction: 'Note: Created order 17\nTotal: $42.00' });
    expect(r.failure?.reason).toBe('the prediction does not start with this text');
  });
  it('finds middle regions in order', () => {
    const ref2 = 'pid 991 started; result=ok; took 3ms';
    const a = ref2.indexOf(' started');
    const b = ref2.indexOf(' result');
    const c = ref2.indexOf(' took');
    const spans2 = [
      { start: 0, end: a, kind: 'runtime_metadata' as const },
      { start: a, end: b, kind: 'deterministic' as const },
      { start: b, end: c, kind: 'deterministic' as const },
      { start: c, end: ref2.length, kind: 'runtime_metadata' as const },
    ];
    // Touching spans merge into one region; prefix and suffix are free.
    expect(v({ reference: ref2, spans: spans2, prediction: 'pid 12 started; result=ok; took 9ms' }).pass).toBe(true);
    const r = v({ reference: ref2, spans: spans2, prediction: 'pid 12 started; result=fail; took 9ms' });
    expect(r.failure).toMatchObject({ region: { label: `span [${a}, ${c})`, expected: ' started; result=ok;' }, reason: 'missing from the prediction' });
  });
  it('is not applicable when no span is deterministic', () => {
    expect(v({ reference: 'x', spans: [{ start: 0, end: 1, kind: 'pre_existing' }], prediction: 'y' })).toMatchObject({ pass: true, applicable: false });
  });
  it('uses UTF-16 offsets', () => {
    const r = 'héllo 😀 world';
    const end = r.indexOf(' world');
    expect(v({ reference: r, spans: [{ start: 0, end, kind: 'deterministic' }], prediction: 'héllo 😀 there' }).pass).toBe(true);
    expect(v({ reference: r, spans: [{ start: 0, end, kind: 'deterministic' }], prediction: 'hello 😀 there' }).pass).toBe(false);
  });
});

describe('verifier per-domain rules (no spans)', () => {
  it('terminal: a silent command must print nothing', () => {
    expect(v({ action: 'mkdir -p build && cd build', reference: '', prediction: '' })).toMatchObject({ pass: true, rule: 'silent-command' });
    const r = v({ action: 'mkdir -p build', reference: '', prediction: 'Directory created.' });
    expect(r).toMatchObject({ pass: false, rule: 'silent-command' });
    expect(r.failure?.reason).toBe('the observation must be empty');
  });
  it('terminal: echo prints its text exactly', () => {
    expect(v({ action: 'echo "hello world"', reference: 'hello world\n', prediction: 'hello world' })).toMatchObject({ pass: true, rule: 'echo' });
    expect(v({ action: 'echo "hello world"', reference: 'hello world', prediction: 'hello, world' }).pass).toBe(false);
    // Variables make the output depend on state the verifier does not track.
    expect(v({ action: 'echo $HOME', reference: '/root', prediction: '/home/x' }).rule).not.toBe('echo');
  });
  it('terminal: reading a file written earlier in the session', () => {
    const history = [
      { action: 'echo "alpha=1" > conf.txt', observation: '' },
      { action: 'ls', observation: 'conf.txt' },
    ];
    expect(v({ history, action: 'cat conf.txt', reference: 'alpha=1', prediction: 'alpha=1' })).toMatchObject({ pass: true, rule: 'read-after-write' });
    const r = v({ history, action: 'cat conf.txt', reference: 'alpha=1', prediction: 'alpha=2' });
    expect(r.pass).toBe(false);
    expect(r.regions[0].label).toContain('written at turn 1');
  });
  it('terminal: appends or edits since the write make the content unknown', () => {
    const history = [
      { action: 'echo "a" > f.txt', observation: '' },
      { action: "sed -i 's/a/b/' f.txt", observation: '' },
    ];
    expect(v({ history, action: 'cat f.txt', reference: 'b', prediction: 'zzz' }).applicable).toBe(false);
  });
  it('terminal: re-reading a file printed before', () => {
    const history = [{ action: 'cat /etc/hostname', observation: 'box-1' }];
    expect(v({ history, action: 'cat /etc/hostname', reference: 'box-1', prediction: 'box-2' })).toMatchObject({ pass: false, rule: 'reread' });
  });
  it('reads the command out of JSON tool calls and fenced blocks', () => {
    expect(shellCommand('{"name": "bash", "arguments": {"command": "echo hi"}}')).toBe('echo hi');
    expect(shellCommand('```bash\n$ ls -la\n```')).toBe('ls -la');
    expect(v({ domain: 'os', action: '```bash\necho done\n```', reference: 'done', prediction: 'done' }).rule).toBe('echo');
  });
  it('mcp: result fields that repeat the call arguments must come back unchanged', () => {
    const action = '{"name": "get_order", "arguments": {"order_id": "A-17", "verbose": true}}';
    const reference = '{"result": {"order_id": "A-17", "status": "shipped", "items": 3}}';
    const ok = v({ domain: 'mcp', action, reference, prediction: '{"result": {"order_id": "A-17", "status": "pending", "items": 1}}' });
    expect(ok).toMatchObject({ pass: true, rule: 'mcp-result-fields', regions: [{ label: 'field result.order_id', expected: '"A-17"' }] });
    const bad = v({ domain: 'mcp', action, reference, prediction: '{"result": {"order_id": "A-18", "status": "shipped"}}' });
    expect(bad.failure).toEqual({ region: { label: 'field result.order_id', expected: '"A-17"' }, reason: 'the prediction has "A-18"' });
    expect(v({ domain: 'mcp', action, reference, prediction: 'Order A-17 shipped' }).failure?.reason).toContain('not JSON');
  });
  it('other domains: quoted arguments the environment echoed', () => {
    const action = 'type [12] "pizza near me"';
    const reference = 'Search box now contains: pizza near me';
    expect(v({ domain: 'web', action, reference, prediction: 'Search field: pizza near me' })).toMatchObject({ pass: true, rule: 'echoed-arguments' });
    expect(v({ domain: 'web', action, reference, prediction: 'Search field: pizza' }).pass).toBe(false);
    expect(v({ domain: 'android', action: 'click [3]', reference: 'Settings opened', prediction: 'x' })).toMatchObject({
      applicable: false,
      pass: true,
      rule: 'none',
    });
  });
});
