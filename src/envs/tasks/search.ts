// Search tasks: open a page, answer a question, compare two pages. An answer is given with the
// environment's own answer("text") action; the check reads the last answer submitted.
import { formatCall } from '../action.ts';
import { corpus, question, type Doc } from '../search/corpus.ts';
import { SearchEnv } from '../search/index.ts';
import { fail, normalizeAnswer, pass, plan, replaceGoal, str } from './common.ts';
import type { DomainTasks, TaskFamily, TaskParams, Verdict } from './types.ts';

type F = TaskFamily<SearchEnv>;

const docOf = (p: TaskParams, key = 'doc'): Doc | undefined => corpus()[Number(p[key])];
const ANSWER = 'submit it with answer("...")';

/** Does `given` state `fact`? Case, quotes, a final full stop and thousands separators aside; "N km" may be given as N. */
export function answerMatches(given: string, fact: string): boolean {
  const g = normalizeAnswer(given).replace(/(\d),(?=\d{3}\b)/g, '$1');
  const f = normalizeAnswer(fact);
  return g === f || (/^\d+ km$/.test(f) && g === f.slice(0, -3));
}

function lastAnswer(env: SearchEnv, want: string): Verdict {
  const answers = env.answers ?? [];
  const last = answers[answers.length - 1];
  if (last === undefined) return fail('no answer was submitted');
  return answerMatches(last, want) ? pass(`answered ${JSON.stringify(last)}`) : fail(`answered ${JSON.stringify(last)}, not ${JSON.stringify(want)}`);
}

const openPage: F = {
  name: 'open_page',
  level: 1,
  draw: (rng) => {
    const doc = rng.pick(corpus());
    return { goal: `open the encyclopedia page about ${doc.title}`, params: { doc: doc.id } };
  },
  check: (env, p) => {
    const want = docOf(p);
    if (!want) return fail('the task names no page');
    return env.page?.id === want.id ? pass(`${want.title} is open`) : fail(`${env.page ? env.page.title : 'no page'} is open, not ${want.title}`);
  },
  solver: (_env, p) => plan(formatCall('open', docOf(p)?.url ?? '')),
  nearMisses: (p) => [
    () => plan(formatCall('search', docOf(p)?.title ?? '')),
    () => plan(formatCall('open', corpus()[(Number(p.doc) + 1) % corpus().length].url)),
  ],
};

const lookup: F = {
  name: 'lookup',
  level: 2,
  draw: (rng) => {
    const doc = rng.pick(corpus());
    const key = rng.pick(Object.keys(doc.facts));
    return { goal: `find the answer to "${question(doc, key)}" and ${ANSWER}`, params: { doc: doc.id, key, answer: doc.facts[key] } };
  },
  check: (env, p) => lastAnswer(env, str(p, 'answer')),
  solver: (_env, p) => {
    const doc = docOf(p);
    return plan(formatCall('search', doc?.title ?? ''), formatCall('open', doc?.url ?? ''), formatCall('answer', str(p, 'answer')));
  },
  nearMisses: (p) => {
    const doc = docOf(p);
    const other = Object.entries(doc?.facts ?? {}).find(([k, v]) => k !== str(p, 'key') && !answerMatches(v, str(p, 'answer')));
    return [
      () => plan(formatCall('search', doc?.title ?? ''), formatCall('open', doc?.url ?? '')),
      () => plan(formatCall('answer', other ? other[1] : (doc?.title ?? ''))),
    ];
  },
};

const COMPARE = { founded: 'was founded earlier', population: 'has the larger population' } as const;

const compare: F = {
  name: 'compare',
  level: 3,
  draw: (rng) => {
    const towns = corpus().filter((d) => d.kind === 'town');
    const [a, b] = rng.sample(towns, 2);
    const key = rng.pick(['founded', 'population'] as const);
    const va = Number(a.facts[key]);
    const vb = Number(b.facts[key]);
    if (va === vb) return null;
    const winner = (key === 'founded' ? va < vb : va > vb) ? a : b;
    return {
      goal: `find which town ${COMPARE[key]}, ${a.title} or ${b.title}, and submit its name with answer("...")`,
      params: { a: a.id, b: b.id, key, answer: winner.title, loser: (winner === a ? b : a).title },
    };
  },
  check: (env, p) => lastAnswer(env, str(p, 'answer')),
  solver: (_env, p) => {
    const a = docOf(p, 'a');
    const b = docOf(p, 'b');
    return plan(
      formatCall('search', a?.title ?? ''),
      formatCall('open', a?.url ?? ''),
      formatCall('find', str(p, 'key') === 'founded' ? 'founded' : 'population'),
      formatCall('open', b?.url ?? ''),
      formatCall('find', str(p, 'key') === 'founded' ? 'founded' : 'population'),
      formatCall('answer', str(p, 'answer')),
    );
  },
  nearMisses: (p) => [() => plan(formatCall('answer', str(p, 'loser'))), () => plan(formatCall('answer', `${str(p, 'loser')} and ${str(p, 'answer')}`))],
};

export const SEARCH_TASK_FAMILIES: F[] = [openPage, lookup, compare];

export const searchTasks: DomainTasks<SearchEnv> = {
  create: () => new SearchEnv(),
  families: SEARCH_TASK_FAMILIES,
  describe: (d, goal) => replaceGoal(d, /answers a question using ([^.]*)\. Question: [\s\S]*$/, `uses $1. Its goal: ${goal}.`),
};
