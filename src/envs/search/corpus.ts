// A generated fictional world (towns, people, companies, rivers, festivals) written up as a
// few hundred encyclopedia pages. Fixed seed, so every fact is checkable and nothing is fetched.
import { Rng } from '../../core/random.ts';

export interface Doc {
  id: number;
  url: string;
  title: string;
  kind: 'town' | 'person' | 'company' | 'river' | 'festival';
  body: string;
  /** Facts a question can ask about: key → answer. */
  facts: Record<string, string>;
}

const SYL = ['mar', 'vel', 'dor', 'ka', 'lin', 'tes', 'ro', 'bra', 'un', 'shi', 'ol', 'fen', 'gar', 'ith', 'zo', 'pel', 'qua', 'nor', 'e', 'sa'];
const FIRST = [
  'Ayla',
  'Bram',
  'Cyra',
  'Dov',
  'Elin',
  'Fitz',
  'Gala',
  'Hale',
  'Isko',
  'Juno',
  'Kael',
  'Lior',
  'Mira',
  'Noor',
  'Oren',
  'Pia',
  'Quin',
  'Rhea',
  'Soren',
  'Tala',
];
const JOBS = ['cartographer', 'engineer', 'poet', 'botanist', 'shipwright', 'astronomer', 'composer', 'physician', 'architect', 'glassmaker'];
const PRODUCTS = ['lanterns', 'clocks', 'sailcloth', 'bicycles', 'telescopes', 'ceramics', 'textiles', 'printing presses'];
const REGIONS = ['the Amber Coast', 'the High Steppe', 'the Lake District of Oss', 'the Southern Marches', 'the Iron Hills'];

let cached: Doc[] | null = null;

function word(rng: Rng, n: number): string {
  let w = '';
  for (let i = 0; i < n; i++) w += rng.pick(SYL);
  return w[0].toUpperCase() + w.slice(1);
}

/** The corpus: same documents on every call and every machine. */
export function corpus(): Doc[] {
  if (cached) return cached;
  const rng = new Rng('lwm-search-world-v1');
  const used = new Set<string>();
  const unique = (make: () => string) => {
    for (;;) {
      const t = make();
      if (!used.has(t)) {
        used.add(t);
        return t;
      }
    }
  };
  const towns = Array.from({ length: 60 }, () => unique(() => word(rng, rng.int(2, 3))));
  const rivers = Array.from({ length: 40 }, () => unique(() => `${word(rng, 2)} River`));
  const people = Array.from({ length: 80 }, () => unique(() => `${rng.pick(FIRST)} ${word(rng, 2)}`));
  const companies = Array.from({ length: 60 }, () => unique(() => `${word(rng, 2)} ${rng.pick(['Works', 'Company', 'Guild', 'Foundry', 'Brothers'])}`));
  const festivals = Array.from({ length: 60 }, () =>
    unique(
      () =>
        `${rng.pick(['Festival', 'Fair', 'Regatta', 'Carnival'])} of ${rng.pick(['Lights', 'Bells', 'Kites', 'Harvest', 'Masks', 'Boats', 'Lanterns', 'Salt'])} (${rng.pick(towns)})`,
    ),
  );
  const docs: Doc[] = [];
  const add = (title: string, kind: Doc['kind'], body: string, facts: Record<string, string>) => {
    docs.push({ id: docs.length, url: `https://wiki.example/${encodeURIComponent(title.replace(/ /g, '_'))}`, title, kind, body, facts });
  };
  const townRiver = new Map<string, string>();
  for (const t of towns) {
    const founded = String(rng.int(900, 1850)),
      pop = String(rng.int(2, 900) * 100),
      river = rng.pick(rivers),
      region = rng.pick(REGIONS),
      mayor = rng.pick(people);
    townRiver.set(t, river);
    add(
      t,
      'town',
      `${t} is a town in ${region}, on the banks of the ${river}. It was founded in ${founded} and has a population of about ${pop}. Its current mayor is ${mayor}. The town is known for its ${rng.pick(['stone bridges', 'covered markets', 'clock tower', 'salt works', 'harbour', 'old university'])}.`,
      { founded, population: pop, river, region, mayor },
    );
  }
  for (const r of rivers) {
    const len = String(rng.int(40, 900)),
      through = towns.filter((t) => townRiver.get(t) === r);
    add(
      r,
      'river',
      `The ${r} is a river ${len} km long that rises in ${rng.pick(REGIONS)}. ${through.length ? `It flows through ${through.join(', ')}.` : 'No town lies on its banks.'} It ${rng.pick(['freezes in most winters', 'is navigable for small boats', 'floods every spring', 'feeds three mills'])}.`,
      { length: `${len} km` },
    );
  }
  for (const p of people) {
    const born = String(rng.int(1700, 1990)),
      town = rng.pick(towns),
      job = rng.pick(JOBS);
    add(
      p,
      'person',
      `${p} (born ${born} in ${town}) is a ${job}. ${p.split(' ')[0]} is best known for ${rng.pick(['a survey of the eastern coast', 'the first mechanical loom of the region', 'a cycle of river songs', 'a catalogue of 400 comets', 'a treatise on glass', 'rebuilding the town hall'])}.`,
      { born, birthplace: town, occupation: job },
    );
  }
  for (const c of companies) {
    const founded = String(rng.int(1750, 2010)),
      hq = rng.pick(towns),
      founder = rng.pick(people),
      product = rng.pick(PRODUCTS),
      staff = String(rng.int(3, 4000));
    add(c, 'company', `${c} is a maker of ${product} based in ${hq}. It was founded in ${founded} by ${founder} and employs about ${staff} people.`, {
      founded,
      headquarters: hq,
      founder,
      product,
      employees: staff,
    });
  }
  for (const f of festivals) {
    const month = rng.pick(['January', 'March', 'May', 'June', 'August', 'October', 'December']),
      since = String(rng.int(1500, 2000));
    add(
      f,
      'festival',
      `The ${f.replace(/ \(.*\)$/, '')} is held every ${month} in ${f.replace(/^.*\((.*)\)$/, '$1')}. It has taken place since ${since} and ends with ${rng.pick(['a torch procession', 'a boat race', 'a night market', 'a choir contest'])}.`,
      { month, since },
    );
  }
  cached = docs;
  return docs;
}

const QUESTION: Record<string, (t: string) => string> = {
  founded: (t) => `In which year was ${t} founded?`,
  population: (t) => `What is the population of ${t}?`,
  river: (t) => `On which river does ${t} lie?`,
  mayor: (t) => `Who is the mayor of ${t}?`,
  region: (t) => `In which region is ${t}?`,
  length: (t) => `How long is the ${t}?`,
  born: (t) => `When was ${t} born?`,
  birthplace: (t) => `Where was ${t} born?`,
  occupation: (t) => `What is ${t}'s occupation?`,
  headquarters: (t) => `Where is ${t} based?`,
  founder: (t) => `Who founded ${t}?`,
  product: (t) => `What does ${t} make?`,
  employees: (t) => `How many people does ${t} employ?`,
  month: (t) => `In which month is the ${t} held?`,
  since: (t) => `Since when has the ${t} taken place?`,
};

export function question(doc: Doc, key: string): string {
  return QUESTION[key](doc.title);
}
