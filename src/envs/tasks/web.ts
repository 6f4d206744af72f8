// Shop tasks: fill the cart or place an order on the web environment's store. Solvers search
// for the product, page through the results to it, choose colour and quantity by name.
import type { Rng } from '../../core/random.ts';
import { formatCall } from '../action.ts';
import type { PlanStep } from '../agent.ts';
import { clickNamed, typeNamed } from '../os/agent.ts';
import { WebEnv } from '../web/index.ts';
import { fail, pass, plan, replaceGoal, str } from './common.ts';
import type { DomainTasks, TaskFamily, TaskParams } from './types.ts';

type F = TaskFamily<WebEnv>;
const PEOPLE = ['Jamie Doe', 'Sam Reed', 'Alex Kim', 'Rosa Lind', 'Omar Haddad', 'Lee Chan'];
const STREETS = ['Elm Street', 'Oak Avenue', 'Mill Road', 'Harbor Lane', 'Pine Court'];
const CITIES = ['Springfield', 'Riverton', 'Lakeside', 'Fairview', 'Ashford', 'Brookdale'];
const same = (a: unknown, b: string) => typeof a === 'string' && a.trim().toLowerCase() === b.trim().toLowerCase();

function drawItem(rng: Rng, env: WebEnv): TaskParams {
  const product = rng.pick(env.catalog);
  return { product: product.name, color: rng.pick(product.colors), qty: rng.int(1, 4) };
}
const item = (p: TaskParams) => `${p.qty} × ${str(p, 'product')} in ${str(p, 'color')}`;

/** Search, page to the product, choose colour and quantity, add it to the cart. */
function addSteps(env: WebEnv, p: TaskParams, qty = str(p, 'qty')): PlanStep[] {
  const name = str(p, 'product');
  return [
    typeNamed(env, 'Search products', () => name),
    formatCall('press', 'Enter'),
    ...Array.from(
      { length: 4 },
      () => () => (env.idOf(name, 'link') === null && env.idOf('Next page') !== null ? formatCall('click', env.idOf('Next page')!) : null),
    ),
    clickNamed(env, name, 'link'),
    () => formatCall('select', env.idOf('Color', 'combobox') ?? 1, str(p, 'color')),
    typeNamed(env, 'Quantity', () => qty),
    clickNamed(env, 'Add to Cart', 'button'),
  ];
}

const addToCart: F = {
  name: 'add_to_cart',
  level: 3,
  draw: (rng, env) => {
    const p = drawItem(rng, env);
    return { goal: `put ${item(p)} in the cart`, params: p };
  },
  check: (env, p) =>
    env.cart?.some((l) => l.product.name === str(p, 'product') && l.color === str(p, 'color') && l.qty === Number(p.qty))
      ? pass(`the cart holds ${item(p)}`)
      : fail(`the cart does not hold ${item(p)}`),
  solver: (env, p) => plan(...addSteps(env, p)),
  nearMisses: (p) => [(env) => plan(...addSteps(env, p).slice(0, -1)), (env) => plan(...addSteps(env, p, String(Number(p.qty) + 1)))],
};

const buy: F = {
  name: 'buy',
  level: 3,
  draw: (rng, env) => {
    const p = drawItem(rng, env);
    const to = { name: rng.pick(PEOPLE), address: `${rng.int(1, 99)} ${rng.pick(STREETS)}`, city: rng.pick(CITIES) };
    return { goal: `buy ${item(p)}, shipping to ${to.name}, ${to.address}, ${to.city}`, params: { ...p, ...to } };
  },
  check: (env, p) => {
    const o = env.orders?.find(
      (x) =>
        x.items?.length === 1 &&
        x.items[0].name === str(p, 'product') &&
        x.items[0].color === str(p, 'color') &&
        x.items[0].qty === Number(p.qty) &&
        same(x.shipTo?.name, str(p, 'name')) &&
        same(x.shipTo?.address, str(p, 'address')) &&
        same(x.shipTo?.city, str(p, 'city')),
    );
    return o ? pass(`order ${o.no} holds ${item(p)} for ${str(p, 'name')}`) : fail(`no order of just ${item(p)} to ${str(p, 'name')}, ${str(p, 'city')}`);
  },
  solver: (env, p) => plan(...checkoutSteps(env, p, str(p, 'city'))),
  nearMisses: (p) => [(env) => plan(...checkoutSteps(env, p, str(p, 'city')).slice(0, -1)), (env) => plan(...checkoutSteps(env, p, `${str(p, 'city')} North`))],
};

function checkoutSteps(env: WebEnv, p: TaskParams, city: string): PlanStep[] {
  return [
    ...addSteps(env, p),
    () => formatCall('click', env.findId((n) => n.name?.startsWith('Cart (') ?? false) ?? 1),
    clickNamed(env, 'Checkout', 'button'),
    typeNamed(env, 'Full name', () => str(p, 'name')),
    typeNamed(env, 'Address', () => str(p, 'address')),
    typeNamed(env, 'City', () => city),
    clickNamed(env, 'Place order', 'button'),
  ];
}

export const WEB_TASK_FAMILIES: F[] = [addToCart, buy];

export const webTasks: DomainTasks<WebEnv> = {
  create: () => new WebEnv(),
  families: WEB_TASK_FAMILIES,
  describe: (d, goal) => replaceGoal(d, /Its goal: [\s\S]*$/, `Its goal: ${goal}.`),
};
