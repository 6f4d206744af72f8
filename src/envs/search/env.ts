// The search environment: a search engine over the generated corpus (BM25-style ranking by
// MiniSearch), pages to open, and find-in-page. Results, snippets and pages the agent has not
// seen yet are pre-existing content; headers, echoes and errors are deterministic.
import MiniSearch from 'minisearch';
import { formatCall, parseCall } from '../action.ts';
import { PlanAgent, RandomAgent, typo, type Agent, type AgentKind, type PlanStep } from '../agent.ts';
import { FakeClock } from '../clock.ts';
import { Rng } from '../../core/random.ts';
import { SpanText } from '../spans.ts';
import type { Environment, EnvReset, StepResult } from '../types.ts';
import { corpus, question, type Doc } from './corpus.ts';

let index: MiniSearch<Doc> | null = null;
function searchIndex(): MiniSearch<Doc> {
  if (index) return index;
  index = new MiniSearch<Doc>({ fields: ['title', 'body'], idField: 'id', searchOptions: { boost: { title: 3 }, prefix: true, fuzzy: 0.15 } });
  index.addAll(corpus());
  return index;
}

const PAGE_SIZE = 5;

export class SearchEnv implements Environment {
  readonly domain = 'search' as const;
  private rng!: Rng;
  private clock!: FakeClock;
  private seen = new Set<string>();
  page: Doc | null = null;
  /** Every answer submitted with answer(...), in order (what a task's success check reads). */
  answers: string[] = [];
  task!: { doc: Doc; key: string; answer: string; question: string };

  reset(seed: number): EnvReset {
    this.rng = new Rng(`search:${seed}`);
    this.clock = new FakeClock(this.rng);
    this.seen.clear();
    this.page = null;
    this.answers = [];
    const docs = corpus();
    const doc = this.rng.pick(docs);
    const key = this.rng.pick(Object.keys(doc.facts));
    this.task = { doc, key, answer: doc.facts[key], question: question(doc, key) };
    return {
      state: { question: this.task.question, corpus_size: docs.length },
      system_prompt: {
        task_description: `An agent answers a question using a search engine over an encyclopedia of ${docs.length} pages. Question: ${this.task.question}`,
        action_space:
          'search("query") lists the top 5 pages with snippets | open("url") shows a page | find("text") lists the lines of the open page that contain the text | answer("text") submits the answer.',
        initial_state: 'The browser shows the empty search page of wiki.example. No page is open.',
        demonstrations:
          'Action: find("harbour")\nObservation:\nError: no page is open; use open(url) first\n\nAction: open("https://wiki.example/Nowhere")\nObservation:\nError 404: https://wiki.example/Nowhere not found',
        simulation_instruction:
          'You are the search engine and browser. Print exactly the results page, the page text, the find results or the error. No explanations.',
      },
    };
  }

  /** Ranked documents for a query (tests and agents use it). */
  rank(query: string): Doc[] {
    const docs = corpus();
    return searchIndex()
      .search(query)
      .map((r) => docs[r.id as number]);
  }

  private lines(st: SpanText, lines: string[]) {
    for (const l of lines) {
      st.add(l + '\n', this.seen.has(l) ? 'deterministic' : 'pre_existing');
      this.seen.add(l);
    }
  }

  step(action: string): StepResult {
    this.clock.tick(this.rng, 1, 12);
    const st = new SpanText();
    const ok = this.run(action, st);
    // Strip the final newline so observations do not end in a blank line.
    const text = st.text.replace(/\n$/, '');
    const spans = st.spans.map((s) => ({ ...s }));
    if (text.length < st.text.length) {
      const last = spans[spans.length - 1];
      last.end -= 1;
      if (last.end === last.start) spans.pop();
    }
    return { observation: text, spans, timestamp: this.clock.iso(), ok };
  }

  private run(action: string, st: SpanText): boolean {
    const p = parseCall(action);
    if ('error' in p) {
      st.det(`Error: ${p.error}`);
      return false;
    }
    const arg = p.args[0];
    const needString = (what: string) => {
      st.det(`Error: ${p.name}() needs ${what} as a string argument`);
      return false;
    };
    switch (p.name) {
      case 'search': {
        if (typeof arg !== 'string' || !arg.trim()) return needString('a query');
        const hits = this.rank(arg);
        if (!hits.length) {
          st.det(`No results for "${arg}".`);
          return true;
        }
        st.det(`Results 1-${Math.min(PAGE_SIZE, hits.length)} of about ${hits.length} for "${arg}":\n`);
        hits.slice(0, PAGE_SIZE).forEach((d, i) => {
          st.det(`${i + 1}. `);
          this.lines(st, [d.title, `   ${d.url}`, `   ${snippet(d, arg)}`]);
        });
        return true;
      }
      case 'open': {
        if (typeof arg !== 'string') return needString('a url');
        const doc = corpus().find((d) => d.url === arg || d.url === `https://${arg}` || d.url === encodeURI(arg));
        if (!doc) {
          st.det(`Error 404: ${arg} not found`);
          return false;
        }
        this.page = doc;
        this.lines(st, [doc.title, '']);
        this.lines(st, sentences(doc.body));
        return true;
      }
      case 'find': {
        if (typeof arg !== 'string' || !arg) return needString('the text to find');
        if (!this.page) {
          st.det('Error: no page is open; use open(url) first');
          return false;
        }
        const hits = sentences(this.page.body)
          .map((s, i) => [i + 1, s] as const)
          .filter(([, s]) => s.toLowerCase().includes(arg.toLowerCase()));
        st.det(`${hits.length} match${hits.length === 1 ? '' : 'es'} for "${arg}" in ${this.page.title}${hits.length ? ':' : '.'}\n`);
        for (const [n, s] of hits) {
          st.det(`[line ${n}] `);
          this.lines(st, [s]);
        }
        return true;
      }
      case 'answer':
        if (typeof arg !== 'string' && typeof arg !== 'number') return needString('the answer');
        this.answers.push(String(arg));
        st.det(`Answer submitted: ${String(arg)}`);
        return true;
      default:
        st.det(`Error: unknown action '${p.name}'; use search, open, find or answer`);
        return false;
    }
  }
}

function sentences(body: string): string[] {
  return body
    .match(/[^.]+(\.|$)/g)!
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The first sentence that mentions a query word, cut to a snippet's length. */
function snippet(doc: Doc, query: string): string {
  const words = query
    .toLowerCase()
    .split(/\W+/)
    .filter((w) => w.length > 2);
  const ss = sentences(doc.body);
  const s = ss.find((x) => words.some((w) => x.toLowerCase().includes(w))) ?? ss[0];
  return s.length > 110 ? s.slice(0, 107) + '...' : s;
}

export function searchAgent(env: SearchEnv, rng: Rng, kind: AgentKind): Agent {
  const docs = corpus();
  if (kind === 'random') {
    return new RandomAgent(rng.int(3, 10), () => {
      const d = rng.pick(docs);
      switch (rng.int(0, 5)) {
        case 0:
        case 1:
          return formatCall('search', rng.pick([d.title, d.title.split(' ')[0], typo(rng, d.title), `${d.kind} ${rng.pick(Object.values(d.facts))}`]));
        case 2:
          return formatCall('open', rng.chance(0.8) ? d.url : d.url.replace('wiki', 'wikki'));
        case 3:
          return formatCall('find', rng.pick(['founded', 'born', 'river', 'population', 'km', 'the']));
        case 4:
          return formatCall('answer', rng.pick(Object.values(d.facts)));
        default:
          return rng.pick(['search()', 'look("x")', formatCall('find', '')]);
      }
    });
  }
  const t = env.task;
  const steps: PlanStep[] = [];
  if (rng.chance(0.25)) steps.push(formatCall('find', t.key));
  if (rng.chance(0.25)) steps.push(formatCall('search', typo(rng, t.doc.title)));
  steps.push(formatCall('search', rng.chance(0.7) ? t.doc.title : `${t.doc.title} ${t.key}`));
  if (rng.chance(0.3)) steps.push(formatCall('open', env.rank(t.doc.title)[1]?.url ?? t.doc.url));
  steps.push(formatCall('open', t.doc.url));
  const word =
    {
      founded: 'founded',
      population: 'population',
      river: 'river',
      mayor: 'mayor',
      region: 'town in',
      length: 'km',
      born: 'born',
      birthplace: 'born',
      occupation: 'is a',
      headquarters: 'based',
      founder: 'founded',
      product: 'maker',
      employees: 'employs',
      month: 'held',
      since: 'since',
    }[t.key] ?? t.key;
  if (rng.chance(0.7)) steps.push(formatCall('find', word));
  steps.push(formatCall('answer', t.answer));
  return new PlanAgent(steps);
}

/** The corpus itself, one page per block: what a search LWM must know. */
export function searchKnowledge(): string {
  return corpus()
    .map((d) => `${d.title}\n${d.url}\n${d.body}\n`)
    .join('\n');
}
