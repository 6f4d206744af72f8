import { describe, expect, it } from 'vitest';
import { formatCall } from './action.ts';
import { AndroidEnv } from './android/index.ts';
import { evaluate } from './mcp/calc.ts';
import { McpEnv, rpc } from './mcp/index.ts';
import { OsEnv } from './os/index.ts';
import { SearchEnv } from './search/index.ts';
import { corpus } from './search/corpus.ts';
import { SweEnv } from './swe/index.ts';
import { WebEnv } from './web/index.ts';

describe('mcp', () => {
  const env = new McpEnv();
  env.reset(3);
  it('rejects a wrong argument type with a JSON-RPC error object', () => {
    const r = env.step(rpc('todo_complete', { id: '2' }, 7));
    expect(JSON.parse(r.observation)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32602, message: "Invalid params for todo_complete: 'id' must be of type integer, got string" },
    });
    expect(r.ok).toBe(false);
  });
  it('reports protocol errors', () => {
    expect(JSON.parse(env.step('{oops').observation).error.code).toBe(-32700);
    expect(JSON.parse(env.step('{"jsonrpc":"2.0","id":1,"method":"resources/list"}').observation).error.code).toBe(-32601);
    expect(JSON.parse(env.step(rpc('weather', {}, 2)).observation).error.message).toBe('Unknown tool: weather');
    expect(JSON.parse(env.step(rpc('todo_add', { text: 'x', priority: 'urgent' }, 3)).observation).error.message).toContain(
      "'priority' must be one of low, normal, high",
    );
  });
  it('lists tools with schemas and runs them with state', () => {
    const list = JSON.parse(env.step('{"jsonrpc":"2.0","id":1,"method":"tools/list"}').observation);
    expect(list.result.tools.find((t: { name: string }) => t.name === 'calculator').inputSchema.required).toEqual(['expression']);
    const w = JSON.parse(env.step(rpc('files_write', { path: 'a/b.txt', content: 'hello' }, 4)).observation);
    expect(JSON.parse(w.result.content[0].text)).toEqual({ path: 'a/b.txt', bytes: 5 });
    const rd = JSON.parse(env.step(rpc('files_read', { path: 'a/b.txt' }, 5)).observation);
    expect(JSON.parse(rd.result.content[0].text).content).toBe('hello');
    const miss = JSON.parse(env.step(rpc('files_read', { path: 'nope' }, 6)).observation);
    expect(miss.result).toEqual({ content: [{ type: 'text', text: 'File not found: nope' }], isError: true });
  });
  it('calculates without eval', () => {
    expect(evaluate('(3 + 4) * 2 ^ 2')).toBe(28);
    expect(evaluate('sqrt(81) - 10 % 4')).toBe(7);
    expect(evaluate('0.1 + 0.2')).toBe(0.3);
    expect(evaluate('1 / 0')).toBe('Division by zero');
    expect(evaluate('1 +')).toBe('Unexpected end of expression');
  });
});

describe('search', () => {
  it('ranks a document first for a query of its exact title', () => {
    const env = new SearchEnv();
    env.reset(1);
    for (const d of corpus().filter((_, i) => i % 15 === 0)) expect(env.rank(d.title)[0].title).toBe(d.title);
  });
  it('opens pages, finds in them, and errors like a browser', () => {
    const env = new SearchEnv();
    env.reset(2);
    expect(env.step(formatCall('find', 'x')).observation).toBe('Error: no page is open; use open(url) first');
    expect(env.step(formatCall('open', 'https://wiki.example/Nowhere')).observation).toBe('Error 404: https://wiki.example/Nowhere not found');
    const d = env.task.doc;
    const r = env.step(formatCall('search', d.title));
    expect(r.observation.split('\n')[1]).toBe(`1. ${d.title}`);
    const page = env.step(formatCall('open', d.url));
    expect(page.observation.startsWith(`${d.title}\n\n`)).toBe(true);
    const hit = env.step(formatCall('find', env.task.answer));
    expect(hit.observation).toMatch(/^\d+ match(es)? for /);
    expect(hit.observation).toContain(env.task.answer);
  });
});

describe('swe', () => {
  it('an edit that fixes the bug turns run_tests from failing to passing', () => {
    const env = new SweEnv();
    env.reset(4);
    const before = env.step('run_tests()');
    expect(before.ok).toBe(false);
    expect(before.observation).toContain('test result: FAILED. 7 passed; 1 failed;');
    const edit = env.step(formatCall('str_replace', env.bug.file, env.bug.wrong, env.bug.right));
    expect(edit.observation.startsWith(`The file ${env.bug.file} has been edited.`)).toBe(true);
    const after = env.step('run_tests()');
    expect(after.ok).toBe(true);
    expect(after.observation).toContain('test result: ok. 8 passed; 0 failed;');
    expect(after.spans[after.spans.length - 1].kind).toBe('runtime_metadata');
  });
  it('reports edit errors and compile errors', () => {
    const env = new SweEnv();
    env.reset(5);
    expect(env.step(formatCall('str_replace', 'src/math.mini', 'nothing like this', 'x')).observation).toBe(
      'No replacement was performed, old_str `nothing like this` did not appear verbatim in src/math.mini.',
    );
    expect(env.step(formatCall('str_replace', 'src/math.mini', 'return', 'x')).observation).toContain('Multiple occurrences');
    env.step(formatCall('create', 'src/broken.mini', 'fn oops( {'));
    const r = env.step('run_tests()');
    expect(r.observation).toMatch(/^error: could not compile src\/broken\.mini:1: /);
    expect(env.step(formatCall('view', 'missing.mini')).observation).toBe('Error: the path missing.mini does not exist.');
  });
});

describe('os desktop', () => {
  it('opens a file from Files, edits it and saves with ctrl+s', () => {
    const env = new OsEnv();
    env.reset(8);
    const file = env.s.folders[0].files[0].name;
    env.step(formatCall('click', env.idOf('Files')!));
    env.step(formatCall('click', env.idOf('Documents')!));
    const opened = env.step(formatCall('click', env.idOf(file)!));
    expect(opened.observation).toContain(`window "${file} - Text Editor"`);
    const typed = env.step(formatCall('type', env.idOf('Document')!, 'new text'));
    expect(typed.observation).toContain(`window "*${file} - Text Editor"`);
    const saved = env.step(formatCall('key', 'ctrl+s'));
    expect(saved.observation.split('\n')[0]).toBe(`Text Editor: saved ${file}`);
    expect(env.fileContent('Documents', file)).toBe('new text');
    expect(env.step('click(999)').observation).toBe('Error: no element with id 999 on the current screen');
  });
  it('toggles dark mode in Settings', () => {
    const env = new OsEnv();
    env.reset(9);
    env.step(formatCall('click', env.idOf('Settings')!));
    const before = env.s.darkMode;
    const r = env.step(formatCall('click', env.idOf('Dark mode')!));
    expect(env.s.darkMode).toBe(!before);
    expect(r.observation).toContain(`switch "Dark mode" (${before ? 'unchecked' : 'checked'})`);
  });
});

describe('web shop', () => {
  it('searches, picks an option, adds to cart and checks out', () => {
    const env = new WebEnv();
    env.reset(11);
    const p = env.catalog[0];
    env.step(formatCall('type', env.idOf('Search products')!, p.name));
    const res = env.step(formatCall('press', 'Enter'));
    expect(res.observation).toContain(`link "${p.name}"`);
    env.step(formatCall('click', env.idOf(p.name, 'link')!));
    const bad = env.step(formatCall('select', env.idOf('Color')!, 'Plaid'));
    expect(bad.observation).toBe(`Error: "Plaid" is not an option of element ${env.idOf('Color')}; options: ${p.colors.join(', ')}`);
    env.step(formatCall('select', env.idOf('Color')!, p.colors[p.colors.length - 1]));
    const added = env.step(formatCall('click', env.idOf('Add to Cart')!));
    expect(added.observation).toContain('link "Cart (1)"');
    env.step(formatCall('click', env.idOf('Cart (1)')!));
    env.step(formatCall('click', env.idOf('Checkout')!));
    const missing = env.step(formatCall('click', env.idOf('Place order')!));
    expect(missing.observation.split('\n')[0]).toBe('Alert: please fill in Full name, Address, City');
    for (const f of ['Full name', 'Address', 'City']) env.step(formatCall('type', env.idOf(f)!, 'x'));
    const done = env.step(formatCall('click', env.idOf('Place order')!));
    expect(done.observation).toContain('Thank you for your order!');
    expect(done.spans.some((s) => s.kind === 'runtime_metadata')).toBe(true);
    expect(env.cart).toEqual([]);
  });
});

describe('android', () => {
  it('adds a contact, sets an alarm, validates input, navigates back and home', () => {
    const env = new AndroidEnv();
    env.reset(12);
    env.step(formatCall('tap', env.idOf('Contacts')!));
    env.step(formatCall('tap', env.idOf('Add contact')!));
    expect(env.step(formatCall('tap', env.idOf('Save')!)).observation.split('\n')[0]).toBe('Toast: Name is required');
    env.step(formatCall('type', env.idOf('Name')!, 'Zed Quill'));
    const saved = env.step(formatCall('tap', env.idOf('Save')!));
    expect(saved.observation.split('\n')[0]).toBe('Toast: Zed Quill saved');
    expect(env.contacts.some((c) => c.name === 'Zed Quill')).toBe(true);
    env.step('home()');
    env.step(formatCall('tap', env.idOf('Clock')!));
    env.step(formatCall('tap', env.idOf('Add alarm')!));
    env.step(formatCall('type', env.idOf('Hour')!, '7'));
    env.step(formatCall('type', env.idOf('Minute')!, '75'));
    expect(env.step(formatCall('tap', env.idOf('OK')!)).observation.split('\n')[0]).toBe('Toast: Enter a valid time');
    env.step(formatCall('type', env.idOf('Minute')!, '5'));
    const ok = env.step(formatCall('tap', env.idOf('OK')!));
    expect(ok.observation).toContain('Switch "07:05" (checked)');
    expect(env.step(formatCall('type', 1, 'x')).observation).toBe('Error: element 1 (FrameLayout) is not editable');
    const back = env.step('back()');
    expect(back.observation).toContain('ImageButton "Contacts"');
  });
});
