import { describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { importAll, importStream, importText, detectFormat, domainFromFileName, type ImportProgress } from './import.ts';
import { readLines } from './lines.ts';
import { exportAgentWorldBench, exportNative, exportTrl, exportVerl, exportVerlParquet, verlRows, VERL_COLUMNS } from './export.ts';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { renderChat, templateForSample, BUILTIN_TEMPLATES, DEFAULT_STAGE_TEMPLATES } from '../templates/index.ts';
import { turnSample } from '../turns/index.ts';
import { categorizeDataset, DEFAULT_MASK_CONFIG } from '../masking/index.ts';
import { cleanAction, cleanObservation, idStem, toAgentWorldBenchRecords } from './agentworldbench.ts';
import { systemPromptFromText, systemPromptToText } from './systemPromptText.ts';
import { formatDataError } from '../schema/validate.ts';
import { emptySystemPrompt, type Trajectory } from '../schema/types.ts';

const fixture = (name: string) => readFileSync(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)));
const load = (name: string, extra = {}) => importAll([fixture(name)], { file: name, ...extra });
const errorLines = (r: { errors: Parameters<typeof formatDataError>[0][] }) => r.errors.map(formatDataError);

/** Splits bytes into pieces of the given size, to cross every chunk boundary. */
function pieces(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.slice(i, i + size));
  return out;
}

describe('readLines', () => {
  it('splits byte chunks on newlines whatever the chunk boundaries, dropping \\r and a BOM', async () => {
    const text = '\ufeffhéllo\r\nwörld 🌍\n\nlast';
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 2, 3, 5, 64]) {
      const got: string[] = [];
      for await (const l of readLines(pieces(bytes, size))) got.push(l.text!);
      expect(got).toEqual(['héllo', 'wörld 🌍', '', 'last']);
    }
  });
  it('reports invalid UTF-8 per line and counts consumed bytes', async () => {
    const bytes = Uint8Array.from([0x61, 0x0a, 0xe9, 0x0a, 0x62]);
    const got = [];
    for await (const l of readLines(pieces(bytes, 2))) got.push(l);
    expect(got.map((l) => l.text)).toEqual(['a', null, 'b']);
    expect(got.map((l) => l.consumed)).toEqual([2, 4, 5]);
  });
  it('accepts string chunks too', async () => {
    const got: string[] = [];
    for await (const l of readLines(['ab', 'c\nd', 'e\n'])) got.push(l.text!);
    expect(got).toEqual(['abc', 'de']);
  });
});

describe('native importer', () => {
  it('imports JSONL, a pretty JSON array and a single pretty object', async () => {
    const jsonl = await load('native/trajectories.jsonl');
    expect(jsonl.format).toBe('native');
    expect(jsonl.errors).toEqual([]);
    expect(jsonl.trajectories.map((t) => [t.id, t.turns.length])).toEqual([
      ['term-0001', 5],
      ['term-0002', 1],
      ['os-0003', 2],
    ]);
    expect(jsonl.trajectories[0].turns[3].metadata?.spans).toHaveLength(2);
    expect(jsonl.trajectories[1].source).toEqual({ format: 'native', file: 'native/trajectories.jsonl', line: 2 });
    const arr = await load('native/array.json');
    expect(arr.trajectories.map((t) => t.source?.line)).toEqual([2, 19]);
    const single = await load('native/single.json');
    expect(single.trajectories.map((t) => t.id)).toEqual(['os-0003']);
  });
  it('imports a 100-turn trajectory', async () => {
    const r = await load('native/hundred-turns.jsonl');
    expect(r.trajectories[0].turns).toHaveLength(100);
    expect(r.trajectories[0].turns[99].action).toContain("sed -n '991,1000p'");
  });
  it('reports each bad line with file, line and pointer, and imports the good ones', async () => {
    const r = await load('native/malformed.jsonl');
    expect(r.trajectories.map((t) => t.id)).toEqual(['term-0002', 'os-0003']);
    expect(errorLines(r)).toEqual([
      expect.stringMatching(/^native\/malformed\.jsonl:2: not valid JSON/),
      'native/malformed.jsonl:3: /turns: missing required field',
      'native/malformed.jsonl:4: /turns/0/observation: expected string, got an array',
      "native/malformed.jsonl:5: /turns/0/metadata/spans/0/end: span ends at 9, past the observation's length 3",
      'native/malformed.jsonl:6: /turns/0/metadata/timestamp: expected a date-time string (e.g. 2025-01-31T12:00:00Z), got "yesterday"',
      'native/malformed.jsonl:7: expected a JSON object per line, got an array',
    ]);
  });
  it('locates an error inside a pretty JSON array on the line of the bad field', async () => {
    const r = await load('native/array-invalid.json');
    const text = fixture('native/array-invalid.json').toString('utf8').split('\n');
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0].pointer).toBe('/turns/0/observation');
    expect(text[r.errors[0].line! - 1]).toContain('"observation": 42');
  });
  it('handles an empty file, a blank file, a non-UTF-8 line and a UTF-16 file', async () => {
    for (const f of ['empty.jsonl', 'blank.jsonl']) {
      const r = await load(f);
      expect(r.trajectories).toEqual([]);
      expect(r.errors).toEqual([]);
    }
    const latin = await load('not-utf8.jsonl');
    expect(latin.trajectories).toHaveLength(2);
    expect(errorLines(latin)).toEqual(['not-utf8.jsonl:2: not valid UTF-8 text (save the file as UTF-8)']);
    const u16 = await load('utf16.jsonl');
    expect(errorLines(u16)).toEqual(['utf16.jsonl:1: the file is UTF-16 text; save it as UTF-8']);
  });
  it('reads the rest as JSONL when the first line is broken', async () => {
    const good = JSON.stringify({ id: 'a', domain: 'os', system_prompt: emptySystemPrompt(), turns: [] });
    const r = await importText(`{"id": \n${good}\n`, { file: 'x.jsonl' });
    expect(r.trajectories.map((t) => t.id)).toEqual(['a']);
    expect(errorLines(r)).toEqual(['x.jsonl:1: not valid JSON']);
  });
});

describe('AgentWorldBench importer', () => {
  it('merges per-turn records into trajectories and strips the headers', async () => {
    const r = await load('agentworldbench/terminal_test.jsonl');
    expect(r.format).toBe('agentworldbench');
    expect(r.errors).toEqual([]);
    const [t, u] = r.trajectories;
    expect(t.id).toBe('terminal_0007');
    expect(t.domain).toBe('terminal');
    expect(t.turns.map((x) => x.action)).toEqual(['ls -S /var/log | head -3', 'du -h /var/log/syslog', 'wc -l /var/log/syslog']);
    expect(t.turns[1].observation).toBe('4.2M\t/var/log/syslog');
    expect(t.system_prompt.task_description).toBe('List the biggest log files.');
    expect(t.system_prompt.text).toBeUndefined();
    expect(Array.isArray(t.source?.raw) && t.source.raw).toHaveLength(3);
    expect(u.system_prompt.text).toBe('You are a Linux terminal. Reply with command output only.');
  });
  it('reads the domain as the last part of a prefixed task', async () => {
    const text = fixture('agentworldbench/terminal_test.jsonl')
      .toString('utf8')
      .replace(/"task": ?"terminal"/g, '"task": "agentworldbench/terminal"');
    expect(text).toContain('agentworldbench/terminal');
    const r = await importAll([Buffer.from(text)], { file: 'x.jsonl' });
    expect(r.errors).toEqual([]);
    expect(r.trajectories.map((t) => t.domain)).toEqual(['terminal', 'terminal']);
  });
  it('accepts loose headers, a shared id and records out of order', async () => {
    const r = await load('agentworldbench/search_test.jsonl');
    expect(r.errors).toEqual([]);
    expect(r.trajectories).toHaveLength(1);
    expect(r.trajectories[0].turns.map((x) => x.action)).toEqual(['search("best hiking boots 2024")', 'open_result(2)']);
    expect(r.trajectories[0].turns[0].observation.startsWith('1. The 10 Best')).toBe(true);
  });
  it('groups records with unrelated ids by their shared history and notes missing turns', async () => {
    const r = await load('agentworldbench/mcp_test.jsonl');
    expect(r.errors).toEqual([]);
    expect(r.trajectories).toHaveLength(1);
    expect(r.trajectories[0].turns).toHaveLength(3);
    expect(r.trajectories[0].metadata).toEqual({ agentworldbench: { total_turns: 3, turn_indices: [1, 3] } });
  });
  it('reports malformed and contradicting records', async () => {
    const r = await load('agentworldbench/malformed.jsonl');
    expect(r.trajectories.map((t) => t.id)).toEqual(['terminal_0008', 'terminal_0007']);
    expect(errorLines(r)).toEqual([
      'agentworldbench/malformed.jsonl:2: /prompt: turn_idx is 2, so prompt must hold 2 actions (or 1 plus current_prompt), got 1',
      'agentworldbench/malformed.jsonl:3: /prompt: expected array, got "ls"',
      'agentworldbench/malformed.jsonl:4: /turn_idx: must be >= 1, got number 0',
      expect.stringMatching(/^agentworldbench\/malformed\.jsonl:5: not valid JSON/),
      'agentworldbench/malformed.jsonl:7: /prompt/0: action of turn 1 differs from the one given on line 6 for the same trajectory "terminal_0007"',
    ]);
  });
  it('round-trips exactly: file → import → export gives the same lines', async () => {
    for (const f of ['agentworldbench/terminal_test.jsonl', 'agentworldbench/search_test.jsonl', 'agentworldbench/mcp_test.jsonl']) {
      const text = fixture(f).toString('utf8');
      const r = await importText(text, { file: f });
      const back = [...exportAgentWorldBench(r.trajectories)];
      // Same records (the importer orders each trajectory's records by turn_idx).
      const canon = (ls: string[]) => ls.map((l) => JSON.stringify(JSON.parse(l))).sort();
      expect(canon(back)).toEqual(canon(text.trim().split('\n')));
    }
    // Our own compact layout comes back byte for byte.
    const canonical = fixture('agentworldbench/terminal_test.jsonl').toString('utf8');
    const r = await importText(canonical, { file: 'terminal_test.jsonl' });
    expect([...exportAgentWorldBench(r.trajectories)].join('\n') + '\n').toBe(canonical);
  });
  it('round-trips exactly: trajectory → export → import gives the same trajectory', async () => {
    const t: Trajectory = {
      id: 'x_t1',
      domain: 'android',
      system_prompt: { ...emptySystemPrompt(), task_description: 'Open settings', action_space: 'tap(x, y)\nswipe' },
      turns: [
        { action: '**Action:** tap(10, 20)', observation: '' },
        { action: '  indented\n', observation: '**Environment Observation:**\n<node text="Wi-Fi"/>' },
      ],
    };
    const lines = [...exportAgentWorldBench([t])];
    const back = await importText(lines.join('\n'), { keepRaw: false });
    expect(back.errors).toEqual([]);
    expect(back.trajectories).toHaveLength(1);
    const { source, ...rest } = back.trajectories[0];
    expect(rest).toEqual(t);
    expect(source?.format).toBe('agentworldbench');
  });
  it('writes changed trajectories from their fields, not their stale raw records', async () => {
    const r = await load('agentworldbench/terminal_test.jsonl');
    r.trajectories[0].turns[0].observation = 'changed';
    const recs = toAgentWorldBenchRecords(r.trajectories[0]);
    expect(recs[2].response[0]).toBe('**Environment Observation:**\nchanged');
  });
  it('cleans headers and stems ids as documented', () => {
    expect(cleanAction('### Turn 3\n**Action:**\nls', 3)).toBe('ls');
    expect(cleanAction('## Turn 3:\n**Action:**: ls', 3)).toBe('ls');
    expect(cleanAction('ls', 1)).toBe('ls');
    expect(cleanObservation('**Environment Observation:** ok')).toBe('ok');
    expect(idStem('abc_t3', 3)).toEqual({ stem: 'abc', stemmed: true });
    expect(idStem('abc-turn_2', 2)).toEqual({ stem: 'abc', stemmed: true });
    expect(idStem('abc_t3', 2)).toEqual({ stem: 'abc_t3', stemmed: false });
    expect(idStem('abc_3', 3)).toEqual({ stem: 'abc_3', stemmed: false });
  });
  it('splits system text in the five-header layout and keeps other text whole', () => {
    const sp = { ...emptySystemPrompt(), task_description: 'a\n\nb', simulation_instruction: 'c' };
    expect(systemPromptFromText(systemPromptToText(sp))).toEqual(sp);
    expect(systemPromptFromText('free text')).toEqual({ ...emptySystemPrompt(), text: 'free text' });
    expect(systemPromptFromText('## Task Description\nonly one')).toEqual({ ...emptySystemPrompt(), text: '## Task Description\nonly one' });
  });
});

describe('OpenAI messages importer', () => {
  it('turns tool calls into actions and tool replies into observations', async () => {
    const r = await load('openai/tool_calls.jsonl');
    expect(r.format).toBe('openai');
    expect(r.errors).toEqual([]);
    const [t, multi] = r.trajectories;
    expect(t.id).toBe('chat-1');
    expect(t.domain).toBe('mcp');
    expect(t.system_prompt.task_description).toBe('You are a coding assistant with filesystem tools.\n\nWhat does config.yaml set the port to?');
    expect(JSON.parse(t.system_prompt.action_space)).toHaveLength(2);
    expect(t.turns).toEqual([
      { action: 'list_dir({"path": "."})', observation: 'config.yaml\nREADME.md\nsrc/' },
      { action: 'Reading the config.\nread_file({"path": "config.yaml"})', observation: 'server:\n  port: 8080\n  host: 0.0.0.0\n' },
    ]);
    expect(t.metadata).toEqual({ final_action: 'The port is 8080.' });
    expect(multi.id).toBe('tool_calls-L2');
    expect(multi.turns[0]).toEqual({ action: 'ls\nsh({"cmd":"ls"})\nsh({"cmd":"pwd"})', observation: '[sh] README.md\n[sh] /home/user' });
  });
  it('treats user replies after the first action as observations', async () => {
    const r = await load('openai/chat.jsonl');
    expect(r.trajectories[0].turns).toEqual([
      { action: 'go to countertop 1', observation: 'On the countertop 1, you see a mug 1, a knife 2.' },
      { action: 'take mug 1 from countertop 1', observation: 'You pick up the mug 1 from the countertop 1.' },
    ]);
  });
  it('reports malformed records', async () => {
    const r = await load('openai/malformed.jsonl');
    expect(r.trajectories).toHaveLength(1);
    expect(r.errors.map((e) => [e.line, e.pointer])).toEqual([
      [2, '/messages/0/role'],
      [3, '/messages'],
      [4, '/messages'],
      [5, ''],
    ]);
  });
});

describe('ShareGPT importer', () => {
  it('maps function_call/observation and gpt/human to actions and observations', async () => {
    const r = await load('sharegpt/tools.jsonl');
    expect(r.format).toBe('sharegpt');
    const [t, u] = r.trajectories;
    expect(t.system_prompt.task_description).toBe('You are a travel assistant with tools.\n\nCheck the weather in Paris and book a table if it is sunny.');
    expect(t.system_prompt.action_space).toContain('get_weather');
    expect(t.turns).toHaveLength(2);
    expect(t.turns[1].action).toBe('It is sunny. Booking now.\n{"name": "book_table", "arguments": {"restaurant": "Le Petit", "time": "19:30"}}');
    expect(t.turns[1].observation).toContain('BK-2231');
    expect(u.id).toBe('sg-2');
    expect(u.system_prompt.task_description).toBe('You are a shell.\n\nShow disk usage');
    const arr = await load('sharegpt/array.json');
    expect(arr.trajectories.map((x) => x.turns.length)).toEqual([1, 2]);
  });
  it('reports malformed records', async () => {
    const r = await load('sharegpt/malformed.jsonl');
    expect(r.trajectories).toHaveLength(1);
    expect(r.errors.map((e) => [e.line, e.pointer])).toEqual([
      [2, '/conversations/0/value'],
      [3, '/conversations/0/from'],
      [4, '/conversations'],
      [5, ''],
    ]);
  });
});

describe('AgentInstruct importer', () => {
  it('keeps loss flags as loss-weight overrides and maps task families to domains', async () => {
    const r = await load('agentinstruct/agentinstruct.jsonl');
    expect(r.format).toBe('agentinstruct');
    const [os, web] = r.trajectories;
    expect(os.domain).toBe('os');
    expect(web.domain).toBe('web');
    expect(os.turns.map((t) => t.metadata?.loss_weight_override)).toEqual([0, 1]);
    expect(os.turns[0]).toMatchObject({ action: 'OK.' });
    expect(os.turns[1].observation).toBe('The output of the OS:\n\n27');
    expect(os.metadata).toEqual({ final_action: 'Think: The output is 27.\n\nAct: answer(27)' });
    expect(web.turns).toHaveLength(3);
  });
  it('reports malformed records', async () => {
    const r = await load('agentinstruct/malformed.jsonl');
    expect(r.errors.map((e) => [e.line, e.pointer])).toEqual([
      [2, '/conversations/0/loss'],
      [3, '/conversations'],
    ]);
  });
});

describe('duplicate trajectory ids', () => {
  /** The first record of a fixture, with `id` set when the format carries ids on the record. */
  const firstRecord = (name: string, id?: string) => {
    const r = JSON.parse(fixture(name).toString('utf8').split('\n')[0]);
    if (id !== undefined) r.id = id;
    return JSON.stringify(r);
  };
  it.each([
    ['native', 'native/trajectories.jsonl', undefined],
    ['openai', 'openai/chat.jsonl', 'chat-1'],
    ['sharegpt', 'sharegpt/tools.jsonl', 'conv-1'],
    ['agentinstruct', 'agentinstruct/agentinstruct.jsonl', undefined],
  ] as const)('%s: the later copy is left out with an error naming both lines', async (_format, name, id) => {
    const line = firstRecord(name, id);
    const r = await importText(`${line}\n${line}\n`, { file: 'dup.jsonl' });
    expect(r.trajectories).toHaveLength(1);
    expect(r.trajectories[0].source?.line).toBe(1);
    expect(errorLines(r)).toEqual([
      `dup.jsonl:2: /id: duplicate trajectory id "${r.trajectories[0].id}": this copy (dup.jsonl:2) is left out, the id was first seen at dup.jsonl:1`,
    ]);
  });
  it('agentworldbench and multi-file imports: one map of taken ids spans the files', async () => {
    const seenIds = new Map();
    const a = await load('agentworldbench/terminal_test.jsonl', { seenIds, file: 'a/terminal_test.jsonl' });
    const b = await load('agentworldbench/terminal_test.jsonl', { seenIds, file: 'b/terminal_test.jsonl' });
    expect(a.trajectories.map((t) => t.id)).toEqual(['terminal_0007', 'terminal_0008']);
    expect(a.errors).toEqual([]);
    expect(b.trajectories).toEqual([]);
    expect(errorLines(b)).toEqual([
      'b/terminal_test.jsonl:1: /id: duplicate trajectory id "terminal_0007": this copy (b/terminal_test.jsonl:1) is left out, the id was first seen at a/terminal_test.jsonl:1',
      'b/terminal_test.jsonl:4: /id: duplicate trajectory id "terminal_0008": this copy (b/terminal_test.jsonl:4) is left out, the id was first seen at a/terminal_test.jsonl:4',
    ]);
  });
  it('a native record carrying a source from elsewhere is located by its own line', async () => {
    const t = JSON.parse(firstRecord('native/trajectories.jsonl'));
    t.source = { format: 'openai', file: 'orig.jsonl', line: 77 };
    const line = JSON.stringify(t);
    const r = await importText(`${line}\n\n${line}\n`, { file: 'dup.jsonl' });
    expect(r.trajectories).toHaveLength(1);
    expect(errorLines(r)[0]).toContain('this copy (dup.jsonl:3) is left out, the id was first seen at dup.jsonl:1');
  });
});

describe('format detection and options', () => {
  it('detects each format and can be overridden', async () => {
    expect(detectFormat({ id: 'a', system_prompt: {}, turns: [] })).toBe('native');
    expect(detectFormat({ turn_idx: 1, prompt: [] })).toBe('agentworldbench');
    expect(detectFormat({ messages: [] })).toBe('openai');
    expect(detectFormat({ conversations: [{ from: 'human', value: '' }] })).toBe('sharegpt');
    expect(detectFormat({ conversations: [{ from: 'human', value: '', loss: false }] })).toBe('agentinstruct');
    expect(detectFormat({ foo: 1 })).toBeUndefined();
    // Forced: AgentInstruct records read as plain ShareGPT lose their loss flags.
    const r = await load('agentinstruct/agentinstruct.jsonl', { format: 'sharegpt' });
    expect(r.format).toBe('sharegpt');
    expect(r.trajectories[0].turns[0].metadata).toBeUndefined();
    const unknown = await importText('{"foo": 1}\n', { file: 'u.jsonl' });
    expect(unknown.errors[0].message).toMatch(/cannot tell the format/);
  });
  it('takes the domain from the option, then the record, then the file name', async () => {
    expect(domainFromFileName('data/search_test.jsonl')).toBe('search');
    expect(domainFromFileName('misc.jsonl')).toBeUndefined();
    const r = await load('openai/chat.jsonl', { domain: 'alfworld' });
    expect(r.trajectories[0].domain).toBe('alfworld');
  });
  it('streams: yields trajectories before the input ends and reports progress', async () => {
    const line = JSON.stringify({ id: 'x', domain: 'os', system_prompt: emptySystemPrompt(), turns: [{ action: 'a', observation: 'b' }] });
    let fed = 0;
    async function* source() {
      for (let i = 0; i < 50; i++) {
        fed++;
        yield new TextEncoder().encode(line.replace('"x"', `"x${i}"`) + '\n');
      }
    }
    const seenAt: number[] = [];
    const progress: ImportProgress[] = [];
    for await (const ev of importStream(source(), { onProgress: (p) => progress.push(p), progressEvery: 10 })) {
      if (ev.kind === 'trajectory') seenAt.push(fed);
    }
    expect(seenAt).toHaveLength(50);
    expect(seenAt[0]).toBe(1);
    expect(progress.map((p) => p.lines)).toEqual([10, 20, 30, 40, 50, 50]);
    expect(progress.at(-1)).toMatchObject({ done: true, trajectories: 50, errors: 0 });
  });
  it('keeps at most maxErrors error details but counts them all', async () => {
    const r = await importText('x\n'.repeat(30), { maxErrors: 5 });
    expect(r.errors).toHaveLength(5);
    expect(r.errorCount).toBe(30);
  });
});

describe('exporters', () => {
  const trajectories = async () => (await load('native/trajectories.jsonl')).trajectories;
  it('native JSONL round-trips', async () => {
    const ts = await trajectories();
    const back = await importText([...exportNative(ts)].join('\n'));
    expect(back.trajectories).toEqual(ts);
  });
  it('TRL SFT rows: prompt messages, the observation as the assistant completion, mask category and weight', async () => {
    const rows = [...exportTrl(await trajectories())].map((l) => JSON.parse(l));
    expect(rows).toHaveLength(8);
    const r = rows[2];
    expect(r.prompt[0].role).toBe('system');
    expect(r.prompt.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(r.prompt.at(-1).content).toBe('cat src/main.py');
    expect(r.completion).toEqual([{ role: 'assistant', content: '<predicted_observation>\nprint("hi")\n\n</predicted_observation>' }]);
    expect(r).toMatchObject({ trajectory_id: 'term-0001', turn_index: 2, domain: 'terminal' });
    expect(typeof r.mask_category).toBe('string');
    expect(r.loss_weight).toBeGreaterThan(0);
    expect(['v0', 'v1', 'v2']).toContain(r.template);
  });
  it('RL rows hold exactly one turn per trajectory with the reference', async () => {
    const ts = await trajectories();
    const rows = [...exportTrl(ts, { kind: 'rl', seed: 3 })].map((l) => JSON.parse(l));
    expect(rows.map((r) => r.trajectory_id)).toEqual(['term-0001', 'term-0002', 'os-0003']);
    for (const r of rows) expect(r.reference).toBe(ts.find((t) => t.id === r.trajectory_id)!.turns[r.turn_index].observation);
    const verl = [...exportVerl(ts, { kind: 'rl', seed: 3 })].map((l) => JSON.parse(l));
    // verl validates only rule-style rows (it skips validation of style "model" when a reward model is on).
    expect(verl[0]).toMatchObject({ data_source: 'lwm/terminal', ability: 'world_model', reward_model: { style: 'rule' } });
    expect(verl.map((r) => r.extra_info.turn_index)).toEqual(rows.map((r) => r.turn_index));
    expect(verl.map((r) => r.extra_info.index)).toEqual([0, 1, 2]);
    // The SFT and RL prompts share one chat layout, so the RL stage sees what SFT trained on.
    for (const r of verl) {
      const ts2 = ts.find((t) => t.id === r.extra_info.trajectory_id)!;
      const s = turnSample(ts2, r.extra_info.turn_index);
      expect(r.prompt).toEqual(renderChat(BUILTIN_TEMPLATES[r.extra_info.template], s).prompt);
    }
  });
  it('verl SFT rows: the prompt as chat messages (the RL layout), the wrapped observation as the response', async () => {
    const ts = await trajectories();
    const rows = [...exportVerl(ts)].map((l) => JSON.parse(l));
    expect(rows).toHaveLength(8);
    rows.forEach((r, i) => {
      // The model generates the tag itself (docs/method.md §7), so the tag belongs to the response.
      expect(r.response.startsWith('<predicted_observation>\n')).toBe(true);
      expect(r.response.endsWith('\n</predicted_observation>')).toBe(true);
      const t = ts.find((x) => x.id === r.extra_info.trajectory_id)!;
      const chat = renderChat(BUILTIN_TEMPLATES[r.extra_info.template], turnSample(t, r.extra_info.turn_index));
      expect(r.prompt).toEqual(chat.prompt);
      expect(r.response).toBe(chat.completion.content);
      // No markers of our own text layout: plain chat messages for the trainer's chat template.
      expect(JSON.stringify(r.prompt)).not.toMatch(/<\|(system|observation|action)\|>/);
      expect(r.extra_info.mask_category).toBeTruthy();
      expect(r.extra_info.index).toBe(i);
    });
  });
  it('verl multi-turn rows: one per trajectory, every observation a trained assistant message with its weight', async () => {
    const ts = await trajectories();
    const rows = [...verlRows(ts, { kind: 'multiturn', seed: 2 })] as {
      messages: { role: string; content: string }[];
      extra_info: { trajectory_id: string; turns: number; turn_loss_weights: number[]; turn_mask_categories: string[]; index: number; template: string };
    }[];
    expect(rows.map((r) => r.extra_info.trajectory_id)).toEqual(ts.map((t) => t.id));
    const masks = categorizeDataset(ts, DEFAULT_MASK_CONFIG);
    rows.forEach((r, i) => {
      const t = ts[i];
      const template = templateForSample(DEFAULT_STAGE_TEMPLATES.sft, { trajectoryId: t.id, turnIndex: 0 }, 2);
      expect(r.extra_info.template).toBe(template.version);
      expect(r.extra_info.index).toBe(i);
      expect(r.messages.map((m) => m.role)).toEqual(['system', ...t.turns.flatMap(() => ['user', 'assistant'])]);
      const assistants = r.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
      expect(assistants).toEqual(t.turns.map((u) => `${template.targetOpen}${u.observation}${template.targetClose}`));
      expect(r.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(t.turns.map((u) => u.action));
      expect(r.extra_info.turns).toBe(t.turns.length);
      expect(r.extra_info.turn_loss_weights).toEqual(masks[i].turns.map((m) => m.weight));
      expect(r.extra_info.turn_mask_categories).toEqual(masks[i].turns.map((m) => m.category));
    });
    expect(() => [...exportTrl(ts, { kind: 'multiturn' })]).toThrow(/for verl/);
  });
  it.each(['sft', 'rl', 'multiturn'] as const)('verl %s Parquet: same schema and rows as pyarrow writes for them', async (kind) => {
    const ts = await trajectories();
    const ours = exportVerlParquet(ts, { kind }).bytes;
    const theirs = new Uint8Array(fixture(`verl/${kind}.pyarrow.parquet`));
    const buf = (b: Uint8Array) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
    // The fixture is what scripts/fixtures/verl_parquet.py had pyarrow write for these rows.
    const shape = (b: Uint8Array) =>
      parquetMetadata(buf(b)).schema.map((e) => ({
        name: e.name,
        type: e.type,
        repetition: e.repetition_type ?? null,
        converted: e.converted_type ?? null,
        logical: e.logical_type?.type ?? null,
        children: e.num_children ?? null,
      }));
    expect(shape(ours)).toEqual(shape(theirs));
    const read = async (b: Uint8Array) =>
      JSON.parse(JSON.stringify(await parquetReadObjects({ file: buf(b) }), (_k, v) => (typeof v === 'bigint' ? Number(v) : v)));
    const expected = [...verlRows(ts, { kind })];
    expect(await read(ours)).toEqual(expected);
    expect(await read(theirs)).toEqual(expected);
    expect(Object.keys(expected[0])).toEqual(Object.keys(VERL_COLUMNS[kind]));
  });

  it('a JSON object opened and never closed is read in one pass: its lines are not parsed one by one', async () => {
    const n = 50_000;
    const text = `{\n${'"k": 1,\n'.repeat(n)}`;
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const r = await importText(text, { file: 'open.json' });
      // The first line, then the gathered document once; no line-by-line retries.
      expect(parse.mock.calls.length).toBeLessThanOrEqual(3);
      expect(r.trajectories).toEqual([]);
      expect(r.errorCount).toBe(1);
      expect(r.errors[0]).toMatchObject({ file: 'open.json', line: n + 1 });
      expect(r.errors[0].message).toMatch(/^not valid JSON/);
    } finally {
      parse.mockRestore();
    }
    // A broken first line before JSONL records still reads the records.
    const record = readFileSync(fileURLToPath(new URL('../../../public/default-dataset.jsonl', import.meta.url)), 'utf8').split('\n')[0];
    const back = await importText(`{"broken": \n${record}\n`, { file: 'x.jsonl' });
    expect(back.trajectories).toHaveLength(1);
    expect(back.errorCount).toBe(1);
    expect(back.errors[0]).toMatchObject({ line: 1 });
  });
});
