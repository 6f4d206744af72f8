// Tool-server tasks: notes, calendar events, todos and files in the MCP environment's stores,
// reached through JSON-RPC tools/call requests.
import type { Agent } from '../agent.ts';
import { evaluate } from '../mcp/calc.ts';
import { McpEnv, rpc } from '../mcp/index.ts';
import { fail, pass, plan, replaceGoal, str, WORDS } from './common.ts';
import type { DomainTasks, TaskFamily } from './types.ts';

type F = TaskFamily<McpEnv>;
const VERBS = ['check', 'call', 'buy', 'fix', 'move', 'clean', 'paint', 'order', 'test', 'label'];
const PEOPLE = ['Ana', 'Ben', 'Chen', 'Dara', 'Eli', 'Femi', 'Gus', 'Hana', 'Ivo', 'Jun'];
const EVENTS = ['Standup', 'Dentist', 'Budget review', 'Demo', 'Interview', 'Haircut', 'Piano lesson', 'Retro'];
const FOLDERS = ['docs', 'notes', 'plans'];
const cap = (w: string) => w[0].toUpperCase() + w.slice(1);

/** Calls numbered 1, 2, ... in the order the agent sends them. */
function calls(...steps: ((env: McpEnv) => [string, Record<string, unknown>] | null)[]): (env: McpEnv) => Agent {
  return (env) => {
    let id = 0;
    return plan(
      ...steps.map((s) => () => {
        const c = s(env);
        return c && rpc(c[0], c[1], ++id);
      }),
    );
  };
}
const call = (name: string, args: Record<string, unknown>) => () => [name, args] as [string, Record<string, unknown>];
const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86400_000).toISOString().slice(0, 10);
const plusHour = (t: string) => `${String(Number(t.slice(0, 2)) + 1).padStart(2, '0')}${t.slice(2)}`;
const sameText = (a: unknown, b: string) => typeof a === 'string' && a.trim().toLowerCase() === b.trim().toLowerCase();

/**
 * A probe is one read-only tools/call whose answer shows the goal's item and nothing else the
 * simulation would have to know: the written file, or a future day's calendar (none of the
 * world's own events are on it, and the new event's id follows from the event count the system
 * prompt gives). No other family has one. Listing notes or todos, or today's calendar, shows the
 * world's own items, which the system prompt only counts: in a simulated episode the agent reads
 * them from the world model, which makes them up, so its answer to the probe follows its own
 * invention and never the real list the answer key holds (complete_todo, schedule_after and
 * add_todo alike). A note is read back with its creation time, which moves with the number of
 * actions before it (create_note, compute_note). Its own request id, past any an episode of
 * these families sends.
 */
const PROBE_ID = 99;
const probeCall = (name: string, args: Record<string, unknown>) => rpc(name, args, PROBE_ID);

const writeFile: F = {
  name: 'write_file',
  level: 1,
  draw: (rng) => {
    const path = `${rng.pick(FOLDERS)}/${rng.pick(WORDS)}.txt`;
    const text = `${rng.pick(VERBS)} the ${rng.pick(WORDS)}`;
    return { goal: `write the text "${text}" to the file ${path} in the file store`, params: { path, text } };
  },
  check: (env, p) => {
    const f = env.files?.find((x) => x.path === str(p, 'path'));
    if (!f) return fail(`no file ${str(p, 'path')}`);
    return f.content.trim() === str(p, 'text')
      ? pass(`${str(p, 'path')} holds the text`)
      : fail(`${str(p, 'path')} holds ${JSON.stringify(f.content.slice(0, 60))}`);
  },
  solver: (env, p) => calls(call('files_write', { path: str(p, 'path'), content: str(p, 'text') }))(env),
  probe: (p) => probeCall('files_read', { path: str(p, 'path') }),
  nearMisses: (p) => {
    const [folder, name] = str(p, 'path').split('/');
    // The same file in another folder, which one varying with the file's name: every pairing of
    // folders comes up across tasks. A policy sampled hot writes there most often, and a world
    // model that never saw it read the goal's file back as written (docs/method.md §13).
    const word = Math.max(WORDS.indexOf(name.replace(/\.txt$/, '')), 0);
    const otherFolder = FOLDERS[(FOLDERS.indexOf(folder) + 1 + (word % (FOLDERS.length - 1))) % FOLDERS.length];
    return [
      calls(call('files_write', { path: name, content: str(p, 'text') })),
      calls(call('files_write', { path: str(p, 'path'), content: `${str(p, 'text')} and more` })),
      calls(call('notes_create', { title: str(p, 'path'), body: str(p, 'text') })),
      calls(call('files_write', { path: `${otherFolder}/${name}`, content: str(p, 'text') })),
      // The right call cut short, so not JSON: the server answers a parse error and writes nothing.
      () => plan(rpc('files_write', { path: str(p, 'path'), content: str(p, 'text') }, 1).slice(0, -2)),
      // Another file of the same folder, the name the one after the goal's among the words: the
      // mistake a world model with the five above still credited most in RL (method §13).
      calls(call('files_write', { path: `${folder}/${WORDS[(word + 1) % WORDS.length]}.txt`, content: str(p, 'text') })),
    ];
  },
};

const createNote: F = {
  name: 'create_note',
  level: 1,
  draw: (rng) => {
    const title = cap(rng.pick(WORDS));
    const body = `${rng.pick(VERBS)} the ${rng.pick(WORDS)}`;
    return { goal: `create a note titled "${title}" whose text is "${body}"`, params: { title, body } };
  },
  check: (env, p) =>
    env.notes?.some((n) => sameText(n.title, str(p, 'title')) && sameText(n.body, str(p, 'body')))
      ? pass(`a note "${str(p, 'title')}" holds the text`)
      : fail(`no note titled "${str(p, 'title')}" with that text`),
  solver: (env, p) => calls(call('notes_create', { title: str(p, 'title'), body: str(p, 'body') }))(env),
  nearMisses: (p) => [calls(call('notes_create', { title: str(p, 'body'), body: str(p, 'title') })), calls(call('todo_add', { text: str(p, 'body') }))],
};

const addEvent: F = {
  name: 'add_event',
  level: 1,
  draw: (rng, env) => {
    const title = `${rng.pick(EVENTS)} with ${rng.pick(PEOPLE)}`;
    const date = addDays(env.task.date, rng.int(1, 30));
    const time = `${String(rng.int(8, 18)).padStart(2, '0')}:${rng.pick(['00', '15', '30', '45'])}`;
    return { goal: `add the event "${title}" to the calendar on ${date} at ${time}`, params: { title, date, time } };
  },
  check: (env, p) =>
    env.events?.some((e) => sameText(e.title, str(p, 'title')) && e.date === str(p, 'date') && e.time === str(p, 'time'))
      ? pass(`"${str(p, 'title')}" is on ${str(p, 'date')} at ${str(p, 'time')}`)
      : fail(`no event "${str(p, 'title')}" on ${str(p, 'date')} at ${str(p, 'time')}`),
  solver: (env, p) => calls(call('calendar_add_event', { title: str(p, 'title'), date: str(p, 'date'), time: str(p, 'time') }))(env),
  probe: (p) => probeCall('calendar_list', { date: str(p, 'date') }),
  nearMisses: (p) => [
    calls(call('calendar_add_event', { title: str(p, 'title'), date: str(p, 'date') })),
    calls(call('calendar_add_event', { title: str(p, 'title'), date: addDays(str(p, 'date'), 1), time: str(p, 'time') })),
  ],
};

const addTodo: F = {
  name: 'add_todo',
  level: 1,
  draw: (rng) => {
    const text = `${rng.pick(VERBS)} the ${rng.pick(WORDS)}`;
    const priority = rng.pick(['low', 'high']);
    return { goal: `add a ${priority}-priority todo item "${text}"`, params: { text, priority } };
  },
  check: (env, p) =>
    env.todos?.some((t) => sameText(t.text, str(p, 'text')) && t.priority === str(p, 'priority') && !t.done)
      ? pass(`an open ${str(p, 'priority')}-priority todo "${str(p, 'text')}" exists`)
      : fail(`no open ${str(p, 'priority')}-priority todo "${str(p, 'text')}"`),
  solver: (env, p) => calls(call('todo_add', { text: str(p, 'text'), priority: str(p, 'priority') }))(env),
  nearMisses: (p) => [calls(call('todo_add', { text: str(p, 'text') })), calls(call('notes_create', { title: 'todo', body: str(p, 'text') }))],
};

const computeNote: F = {
  name: 'compute_note',
  level: 2,
  draw: (rng) => {
    const expression = `${rng.int(2, 40)} * ${rng.int(10, 99)} + ${rng.int(1, 500)}`;
    const title = cap(rng.pick(WORDS));
    return {
      goal: `compute ${expression} and save the result in a note titled "${title}"`,
      params: { expression, title, result: String(evaluate(expression)) },
    };
  },
  check: (env, p) => {
    const want = str(p, 'result');
    const hit = env.notes?.some(
      (n) => sameText(n.title, str(p, 'title')) && typeof n.body === 'string' && (n.body.match(/-?\d+(\.\d+)?/g) ?? ([] as string[])).includes(want),
    );
    return hit ? pass(`note "${str(p, 'title')}" holds ${want}`) : fail(`no note "${str(p, 'title')}" holding ${want}`);
  },
  solver: (env, p) =>
    calls(
      call('calculator', { expression: str(p, 'expression') }),
      call('notes_create', { title: str(p, 'title'), body: `${str(p, 'expression')} = ${str(p, 'result')}` }),
    )(env),
  nearMisses: (p) => [
    calls(call('notes_create', { title: str(p, 'title'), body: str(p, 'expression') })),
    calls(call('calculator', { expression: str(p, 'expression') })),
  ],
};

const completeTodo: F = {
  name: 'complete_todo',
  level: 2,
  draw: (rng, env) => {
    // Three or more open items, so that completing a remembered id rarely hits the right one.
    const open = env.todos.filter((t) => !t.done);
    if (open.length < 3) return null;
    const t = rng.pick(open);
    return { goal: `mark the todo item "${t.text}" done and leave the others as they are`, params: { text: t.text } };
  },
  check: (env, p, start) => {
    const before = start().todos;
    const now = env.todos ?? [];
    const target = now.find((t) => t.text === str(p, 'text'));
    if (!target?.done) return fail(`"${str(p, 'text')}" is not done`);
    const changed = before.filter((b) => b.text !== str(p, 'text') && now.find((t) => t.id === b.id)?.done !== b.done);
    return changed.length ? fail(`other items changed too: ${changed.map((c) => c.text).join(', ')}`) : pass(`"${str(p, 'text')}" is done`);
  },
  solver: (env, p) =>
    calls(call('todo_list', {}), (e) => {
      const t = e.todos.find((x) => x.text === str(p, 'text'));
      return t ? ['todo_complete', { id: t.id }] : null;
    })(env),
  nearMisses: (p) => [
    calls(call('todo_list', {}), (e) => {
      const other = e.todos.find((x) => x.text !== str(p, 'text'));
      return other ? ['todo_complete', { id: other.id }] : null;
    }),
    calls(call('todo_add', { text: `${str(p, 'text')} (done)` })),
  ],
};

const scheduleAfter: F = {
  name: 'schedule_after',
  level: 3,
  draw: (rng, env) => {
    const e = rng.pick(env.events);
    if (!e?.time) return null;
    const time = plusHour(e.time);
    if (env.events.some((x) => x.time === time)) return null;
    const title = `${rng.pick(EVENTS)} with ${rng.pick(PEOPLE)}`;
    return {
      goal: `add "${title}" to today's calendar one hour after "${e.title}" starts`,
      params: { title, after: e.title, date: env.task.date, time },
    };
  },
  check: (env, p) =>
    env.events?.some((e) => sameText(e.title, str(p, 'title')) && e.date === str(p, 'date') && e.time === str(p, 'time'))
      ? pass(`"${str(p, 'title')}" is today at ${str(p, 'time')}`)
      : fail(`no event "${str(p, 'title')}" today at ${str(p, 'time')}`),
  solver: (env, p) =>
    calls(call('calendar_list', { date: str(p, 'date') }), (e) => {
      const ref = e.events.find((x) => x.title === str(p, 'after') && x.date === str(p, 'date'));
      return ref?.time ? ['calendar_add_event', { title: str(p, 'title'), date: str(p, 'date'), time: plusHour(ref.time) }] : null;
    })(env),
  nearMisses: (p) => [
    calls(call('calendar_add_event', { title: str(p, 'title'), date: str(p, 'date'), time: plusHour(str(p, 'time')) })),
    calls(call('calendar_add_event', { title: str(p, 'title'), date: str(p, 'date') })),
  ],
};

export const MCP_TASK_FAMILIES: F[] = [writeFile, createNote, addEvent, addTodo, computeNote, completeTodo, scheduleAfter];

export const mcpTasks: DomainTasks<McpEnv> = {
  create: () => new McpEnv(),
  families: MCP_TASK_FAMILIES,
  describe: (d, goal) => replaceGoal(d, /Its goal: [\s\S]*$/, `Its goal: ${goal}.`),
};
