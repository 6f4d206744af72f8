// The mcp environment: an MCP-style tool server spoken to in JSON-RPC 2.0, one request per
// action. tools/list returns JSON Schemas; tools/call runs notes, calendar, todo, calculator and
// a file store. Bad arguments get JSON-RPC errors (-32602), tool failures get isError results.
import { PlanAgent, RandomAgent, type Agent, type AgentKind, type PlanStep } from '../agent.ts';
import { FakeClock } from '../clock.ts';
import { Rng } from '../../core/random.ts';
import { SpanText } from '../spans.ts';
import type { Environment, EnvReset, StepResult } from '../types.ts';
import type { SpanKind } from '../../core/schema/types.ts';
import { evaluate } from './calc.ts';

type JsonSchema = {
  type: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: string[];
  pattern?: string;
  minimum?: number;
  additionalProperties?: boolean;
};
interface Tool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

const str = (description: string, extra: Partial<JsonSchema> = {}): JsonSchema => ({ type: 'string', description, ...extra });
const obj = (properties: Record<string, JsonSchema>, required: string[]): JsonSchema => ({ type: 'object', properties, required, additionalProperties: false });
const DATE = '^\\d{4}-\\d{2}-\\d{2}$';
const TIME = '^\\d{2}:\\d{2}$';

export const TOOLS: Tool[] = [
  { name: 'notes_create', description: 'Create a note.', inputSchema: obj({ title: str('Note title'), body: str('Note text') }, ['title', 'body']) },
  { name: 'notes_list', description: 'List all notes (id and title).', inputSchema: obj({}, []) },
  { name: 'notes_get', description: 'Read one note.', inputSchema: obj({ id: { type: 'integer', minimum: 1, description: 'Note id' } }, ['id']) },
  {
    name: 'calendar_add_event',
    description: 'Add a calendar event.',
    inputSchema: obj({ title: str('Event title'), date: str('YYYY-MM-DD', { pattern: DATE }), time: str('HH:MM, 24-hour', { pattern: TIME }) }, [
      'title',
      'date',
    ]),
  },
  { name: 'calendar_list', description: 'List the events of one day.', inputSchema: obj({ date: str('YYYY-MM-DD', { pattern: DATE }) }, ['date']) },
  {
    name: 'todo_add',
    description: 'Add a todo item.',
    inputSchema: obj({ text: str('What to do'), priority: str('Priority', { enum: ['low', 'normal', 'high'] }) }, ['text']),
  },
  { name: 'todo_complete', description: 'Mark a todo item done.', inputSchema: obj({ id: { type: 'integer', minimum: 1, description: 'Todo id' } }, ['id']) },
  { name: 'todo_list', description: 'List todo items.', inputSchema: obj({ include_done: { type: 'boolean', description: 'Also list finished items' } }, []) },
  {
    name: 'calculator',
    description: 'Evaluate an arithmetic expression (+ - * / % ^, parentheses, sqrt).',
    inputSchema: obj({ expression: str('e.g. (3 + 4) * 2') }, ['expression']),
  },
  {
    name: 'files_write',
    description: 'Write a text file in the file store.',
    inputSchema: obj({ path: str('e.g. docs/plan.txt'), content: str('File text') }, ['path', 'content']),
  },
  { name: 'files_read', description: 'Read a text file from the file store.', inputSchema: obj({ path: str('File path') }, ['path']) },
  { name: 'files_list', description: 'List the files in the store.', inputSchema: obj({}, []) },
];

/** Why `args` does not satisfy `schema`, or null. */
export function checkArgs(schema: JsonSchema, args: unknown): string | null {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return 'arguments must be an object';
  const a = args as Record<string, unknown>;
  for (const r of schema.required ?? []) if (!(r in a)) return `missing required argument '${r}'`;
  for (const [k, v] of Object.entries(a)) {
    const p = schema.properties?.[k];
    if (!p) return `unexpected argument '${k}'`;
    const actual = Array.isArray(v) ? 'array' : v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v;
    const ok = p.type === actual || (p.type === 'number' && actual === 'integer');
    if (!ok) return `'${k}' must be of type ${p.type}, got ${actual === 'integer' ? 'number' : actual}`;
    if (p.enum && !p.enum.includes(v as string)) return `'${k}' must be one of ${p.enum.join(', ')}`;
    if (p.pattern && !new RegExp(p.pattern).test(v as string)) return `'${k}' does not match ${p.description ?? p.pattern}`;
    if (p.minimum !== undefined && (v as number) < p.minimum) return `'${k}' must be >= ${p.minimum}`;
  }
  return null;
}

/** A value whose JSON carries a span class of its own. */
class Lab {
  constructor(
    readonly kind: SpanKind,
    readonly v: unknown,
  ) {}
}
const pre = (known: boolean, v: unknown) => new Lab(known ? 'deterministic' : 'pre_existing', v);
const meta = (v: unknown) => new Lab('runtime_metadata', v);

function writeJson(st: SpanText, v: unknown, kind: SpanKind): void {
  if (v instanceof Lab) return writeJson(st, v.v, v.kind);
  if (Array.isArray(v)) {
    st.det('[');
    v.forEach((x, i) => {
      if (i) st.det(',');
      writeJson(st, x, kind);
    });
    st.det(']');
  } else if (v && typeof v === 'object') {
    st.det('{');
    Object.entries(v).forEach(([k, x], i) => {
      st.det(`${i ? ',' : ''}${JSON.stringify(k)}:`);
      writeJson(st, x, kind);
    });
    st.det('}');
  } else st.add(JSON.stringify(v), kind);
}

interface Item {
  id: number;
  known: boolean;
  created: number;
  titleSeen?: boolean;
}
interface Note extends Item {
  title: string;
  body: string;
}
interface Ev extends Item {
  title: string;
  date: string;
  time?: string;
}
interface Todo extends Item {
  text: string;
  priority: string;
  done: boolean;
}
interface File extends Item {
  path: string;
  content: string;
}

const NOTE_TITLES = ['Groceries', 'Meeting notes', 'Gift ideas', 'Book list', 'Trip plan', 'Recipes'];
const EVENT_TITLES = ['Dentist', 'Team sync', 'Yoga', 'Call with Sam', 'Project review', 'Lunch with Ana'];
const TODOS = ['pay rent', 'renew insurance', 'water plants', 'reply to Lee', 'file expenses', 'order toner'];

export type McpTask = 'plan_meeting' | 'todo_cleanup' | 'compute_budget' | 'write_file' | 'read_note';

export class McpEnv implements Environment {
  readonly domain = 'mcp' as const;
  private rng!: Rng;
  private clock!: FakeClock;
  notes: Note[] = [];
  events: Ev[] = [];
  todos: Todo[] = [];
  files: File[] = [];
  task!: { kind: McpTask; date: string; title: string; expression: string; path: string };

  reset(seed: number): EnvReset {
    this.rng = new Rng(`mcp:${seed}`);
    const rng = this.rng.fork('world');
    this.clock = new FakeClock(this.rng);
    const before = () => this.clock.ms - rng.int(1, 60) * 86400_000;
    let id = 0;
    this.notes = rng.sample(NOTE_TITLES, rng.int(1, 3)).map((title) => ({
      id: ++id,
      known: false,
      created: before(),
      title,
      body: `${title}: ${rng.pick(['milk, eggs, bread', 'ask about budget', 'book by Friday', 'see attached list', 'three options so far'])}`,
    }));
    id = 0;
    const day = new Date(this.clock.ms).toISOString().slice(0, 10);
    this.events = rng.sample(EVENT_TITLES, rng.int(1, 3)).map((title) => ({
      id: ++id,
      known: false,
      created: before(),
      title,
      date: day,
      time: `${String(rng.int(8, 18)).padStart(2, '0')}:${rng.pick(['00', '30'])}`,
    }));
    id = 0;
    this.todos = rng
      .sample(TODOS, rng.int(2, 4))
      .map((text) => ({ id: ++id, known: false, created: before(), text, priority: rng.pick(['low', 'normal', 'high']), done: rng.chance(0.3) }));
    this.files = [{ id: 1, known: false, created: before(), path: 'readme.txt', content: 'Personal file store.\n' }];
    const kind = rng.pick(['plan_meeting', 'todo_cleanup', 'compute_budget', 'write_file', 'read_note'] as const);
    this.task = {
      kind,
      date: day,
      title: rng.pick(EVENT_TITLES),
      expression: `${rng.int(2, 40)} * ${rng.int(10, 99)} + ${rng.int(1, 500)}`,
      path: `docs/${rng.pick(['plan', 'summary', 'draft'])}.txt`,
    };
    const t = this.task;
    const goal = {
      plan_meeting: `schedule "${t.title}" on ${t.date} at a free time and add a todo to prepare for it`,
      todo_cleanup: 'review the todo list and mark the high-priority items done',
      compute_budget: `compute ${t.expression} and save the result in a note titled Budget`,
      write_file: `write a short plan to ${t.path} and read it back`,
      read_note: 'find the note about groceries or trips and read it',
    }[kind];
    return {
      state: { task: kind, notes: this.notes.length, events: this.events.length, todos: this.todos.length },
      system_prompt: {
        task_description: `An agent uses a personal-assistant tool server through the Model Context Protocol. Today is ${day}. Its goal: ${goal}.`,
        action_space: `One JSON-RPC 2.0 request per action: {"jsonrpc":"2.0","id":N,"method":"tools/list"} or {"jsonrpc":"2.0","id":N,"method":"tools/call","params":{"name":TOOL,"arguments":{...}}}. Tools: ${TOOLS.map((x) => x.name).join(', ')}.`,
        initial_state: `The server holds ${this.notes.length} notes, ${this.events.length} events today, ${this.todos.length} todo items and ${this.files.length} file; their contents are not shown.`,
        demonstrations:
          'Action: {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"todo_complete","arguments":{"id":"2"}}}\nObservation:\n{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for todo_complete: \'id\' must be of type integer, got string"}}',
        simulation_instruction: 'You are the MCP server. Reply with exactly one JSON-RPC 2.0 response object on one line. No explanations.',
      },
    };
  }

  step(action: string): StepResult {
    this.clock.tick(this.rng, 1, 15);
    const st = new SpanText();
    const ok = this.handle(action, st);
    return { observation: st.text, spans: st.spans, timestamp: this.clock.iso(), ok };
  }

  private handle(action: string, st: SpanText): boolean {
    let req: unknown;
    try {
      req = JSON.parse(action);
    } catch {
      st.det('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
      return false;
    }
    const r = req as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown } };
    const id = typeof r?.id === 'number' || typeof r?.id === 'string' ? r.id : null;
    const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},`;
    const fail = (code: number, message: string) => {
      st.det(`${head}"error":${JSON.stringify({ code, message })}}`);
      return false;
    };
    if (typeof req !== 'object' || req === null || Array.isArray(req) || r.jsonrpc !== '2.0' || typeof r.method !== 'string')
      return fail(-32600, 'Invalid Request');
    if (r.method === 'tools/list') {
      st.det(`${head}"result":${JSON.stringify({ tools: TOOLS })}}`);
      return true;
    }
    if (r.method !== 'tools/call') return fail(-32601, `Method not found: ${r.method}`);
    const name = r.params?.name;
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool) return fail(-32602, `Unknown tool: ${String(name)}`);
    const args = r.params?.arguments ?? {};
    const bad = checkArgs(tool.inputSchema, args);
    if (bad) return fail(-32602, `Invalid params for ${tool.name}: ${bad}`);
    const out = this.call(tool.name, args as Record<string, unknown>);
    // The tool's JSON goes inside a text content block, escaped as a JSON string.
    const inner = new SpanText();
    if (typeof out.value === 'string') inner.det(out.value);
    else writeJson(inner, out.value, 'deterministic');
    st.det(`${head}"result":{"content":[{"type":"text","text":"`);
    const text = inner.text;
    for (const s of inner.spans) st.add(JSON.stringify(text.slice(s.start, s.end)).slice(1, -1), s.kind);
    st.det(`"}]${out.error ? ',"isError":true' : ''}}}`);
    return !out.error;
  }

  private nextId(items: Item[]) {
    return items.reduce((m, x) => Math.max(m, x.id), 0) + 1;
  }
  private iso() {
    return new Date(this.clock.ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  private call(name: string, a: Record<string, unknown>): { value: unknown; error?: boolean } {
    const shown = <T extends Item>(x: T, f: (x: T) => unknown) => {
      const v = f(x);
      x.known = true;
      return v;
    };
    switch (name) {
      case 'notes_create': {
        const n: Note = { id: this.nextId(this.notes), known: true, created: this.clock.ms, title: a.title as string, body: a.body as string };
        this.notes.push(n);
        return { value: { id: n.id, title: n.title, created_at: meta(this.iso()) } };
      }
      case 'notes_list':
        return {
          value: {
            notes: this.notes.map((n) => {
              const v = { id: n.id, title: pre(n.known || !!n.titleSeen, n.title) };
              n.titleSeen = true;
              return v;
            }),
          },
        };
      case 'notes_get': {
        const n = this.notes.find((x) => x.id === a.id);
        if (!n) return { value: `Note ${a.id as number} not found`, error: true };
        return {
          value: shown(n, () => ({
            id: n.id,
            title: n.title,
            body: pre(n.known, n.body),
            created_at: meta(new Date(n.created).toISOString().replace(/\.\d{3}Z$/, 'Z')),
          })),
        };
      }
      case 'calendar_add_event': {
        const clash = this.events.find((e) => e.date === a.date && a.time !== undefined && e.time === a.time);
        if (clash) return { value: `Time slot ${a.date as string} ${a.time as string} is taken by "${clash.title}"`, error: true };
        const e: Ev = {
          id: this.nextId(this.events),
          known: true,
          created: this.clock.ms,
          title: a.title as string,
          date: a.date as string,
          time: a.time as string | undefined,
        };
        this.events.push(e);
        return { value: { id: e.id, title: e.title, date: e.date, ...(e.time ? { time: e.time } : {}) } };
      }
      case 'calendar_list': {
        const day = this.events.filter((e) => e.date === a.date).sort((x, y) => ((x.time ?? '') < (y.time ?? '') ? -1 : 1));
        return {
          value: { date: a.date, events: day.map((e) => shown(e, () => pre(e.known, { id: e.id, title: e.title, ...(e.time ? { time: e.time } : {}) }))) },
        };
      }
      case 'todo_add': {
        const t: Todo = {
          id: this.nextId(this.todos),
          known: true,
          created: this.clock.ms,
          text: a.text as string,
          priority: (a.priority as string) ?? 'normal',
          done: false,
        };
        this.todos.push(t);
        return { value: { id: t.id, text: t.text, priority: t.priority, done: false } };
      }
      case 'todo_complete': {
        const t = this.todos.find((x) => x.id === a.id);
        if (!t) return { value: `Todo ${a.id as number} not found`, error: true };
        if (t.done) return { value: `Todo ${t.id} is already done`, error: true };
        t.done = true;
        return { value: shown(t, () => ({ id: t.id, text: pre(t.known, t.text), done: true })) };
      }
      case 'todo_list': {
        const items = this.todos.filter((t) => a.include_done === true || !t.done);
        return { value: { todos: items.map((t) => shown(t, () => pre(t.known, { id: t.id, text: t.text, priority: t.priority, done: t.done }))) } };
      }
      case 'calculator': {
        const r = evaluate(a.expression as string);
        return typeof r === 'number' ? { value: { expression: a.expression, result: r } } : { value: r, error: true };
      }
      case 'files_write': {
        const path = a.path as string;
        let f = this.files.find((x) => x.path === path);
        if (!f) {
          f = { id: this.nextId(this.files), known: true, created: this.clock.ms, path, content: '' };
          this.files.push(f);
        }
        f.content = a.content as string;
        f.known = true;
        return { value: { path, bytes: meta(new TextEncoder().encode(f.content).length) } };
      }
      case 'files_read': {
        const f = this.files.find((x) => x.path === a.path);
        if (!f) return { value: `File not found: ${a.path as string}`, error: true };
        return { value: shown(f, () => ({ path: f.path, content: pre(f.known, f.content) })) };
      }
      case 'files_list':
        return { value: { files: this.files.map((f) => ({ path: pre(f.known, f.path), bytes: meta(new TextEncoder().encode(f.content).length) })) } };
    }
    return { value: `Tool ${name} failed`, error: true };
  }
}

export function rpc(name: string, args: Record<string, unknown>, id: number): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
}

export function mcpAgent(env: McpEnv, rng: Rng, kind: AgentKind): Agent {
  let id = 0;
  const call = (name: string, args: Record<string, unknown>) => rpc(name, args, ++id);
  const list = () => JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/list' });
  if (kind === 'random') {
    return new RandomAgent(rng.int(3, 10), () => {
      switch (rng.int(0, 9)) {
        case 0:
          return list();
        case 1:
          return call('notes_get', { id: rng.int(1, 5) });
        case 2:
          return call('todo_complete', { id: rng.chance(0.3) ? String(rng.int(1, 4)) : rng.int(1, 5) });
        case 3:
          return call('calendar_list', { date: rng.chance(0.7) ? env.task.date : 'tomorrow' });
        case 4:
          return call('calculator', { expression: rng.pick(['2+2', '10/0', '(3+4)*5', 'sqrt(81)', '2^10', '7 % 3', '1 +']) });
        case 5:
          return call(rng.pick(['notes_list', 'todo_list', 'files_list']), {});
        case 6:
          return call('files_read', { path: rng.pick(['readme.txt', 'notes.txt', 'docs/plan.txt']) });
        case 7:
          return call(rng.pick(['notes_delete', 'weather']), {});
        case 8:
          return call('todo_add', { text: rng.pick(TODOS), priority: rng.pick(['low', 'high', 'urgent']) });
        default:
          return rng.pick(['{"jsonrpc":"2.0","id":99,"method":"tools/call"', '{"jsonrpc":"2.0","id":7,"method":"resources/list"}']);
      }
    });
  }
  const t = env.task;
  const steps: PlanStep[] = [];
  if (rng.chance(0.5)) steps.push(list);
  switch (t.kind) {
    case 'plan_meeting': {
      steps.push(() => call('calendar_list', { date: t.date }));
      const taken = () => new Set(env.events.filter((e) => e.date === t.date).map((e) => e.time));
      if (rng.chance(0.3)) steps.push(() => call('calendar_add_event', { title: t.title, date: t.date.replace(/-/g, '/'), time: '10:00' }));
      steps.push(() => {
        const free = ['09:00', '10:00', '11:00', '14:00', '15:00', '16:00'].find((h) => !taken().has(h))!;
        return call('calendar_add_event', { title: t.title, date: t.date, time: free });
      });
      steps.push(() => call('todo_add', { text: `prepare for ${t.title}`, priority: rng.pick(['normal', 'high']) }));
      break;
    }
    case 'todo_cleanup':
      steps.push(() => call('todo_list', {}));
      if (rng.chance(0.3)) steps.push(() => call('todo_complete', { id: String(env.todos[0].id) }));
      for (let i = 0; i < 4; i++)
        steps.push(() => {
          const h = env.todos.find((x) => x.priority === 'high' && !x.done);
          return h ? call('todo_complete', { id: h.id }) : null;
        });
      steps.push(() => call('todo_list', { include_done: true }));
      break;
    case 'compute_budget':
      if (rng.chance(0.3)) steps.push(() => call('calculator', { expr: t.expression }));
      steps.push(() => call('calculator', { expression: t.expression }));
      steps.push(() => call('notes_create', { title: 'Budget', body: `${t.expression} = ${evaluate(t.expression)}` }));
      steps.push(() => call('notes_list', {}));
      break;
    case 'write_file':
      steps.push(() => call('files_list', {}));
      if (rng.chance(0.3)) steps.push(() => call('files_read', { path: t.path }));
      steps.push(() => call('files_write', { path: t.path, content: `Plan\n1. ${rng.pick(TODOS)}\n2. ${rng.pick(TODOS)}\n` }));
      steps.push(() => call('files_read', { path: t.path }));
      break;
    case 'read_note':
      steps.push(() => call('notes_list', {}));
      if (rng.chance(0.3)) steps.push(() => call('notes_get', { id: env.notes.length + 3 }));
      steps.push(() => call('notes_get', { id: (env.notes.find((n) => /Groceries|Trip/.test(n.title)) ?? env.notes[0]).id }));
      break;
  }
  return new PlanAgent(steps);
}

export function mcpKnowledge(): string {
  const intro =
    'The assistant tool server speaks JSON-RPC 2.0 in the manner of the Model Context Protocol. Requests: {"jsonrpc":"2.0","id":N,"method":"tools/list"} and {"jsonrpc":"2.0","id":N,"method":"tools/call","params":{"name":TOOL,"arguments":{...}}}. A successful call answers {"jsonrpc":"2.0","id":N,"result":{"content":[{"type":"text","text":JSON}]}} where JSON is the tool\'s result serialised compactly; a failed tool (missing note, taken time slot, division by zero) adds "isError":true and the text is the message. Protocol errors use "error":{"code","message"}: -32700 Parse error (id null), -32600 Invalid Request, -32601 Method not found, -32602 Unknown tool or Invalid params (missing required argument, unexpected argument, wrong type, value not in enum, pattern mismatch).\n\nTOOLS\n';
  return intro + TOOLS.map((t) => `${t.name}: ${t.description}\ninputSchema: ${JSON.stringify(t.inputSchema)}\n`).join('\n');
}
