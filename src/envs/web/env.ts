// The web environment: a small web shop (search, results, product pages with options, cart,
// checkout) rendered as accessibility trees with element ids, in the manner of WebArena.
import type { ActionArg } from '../action.ts';
import { formatCall } from '../action.ts';
import { PlanAgent, RandomAgent, typo, type Agent, type AgentKind, type PlanStep } from '../agent.ts';
import { GuiEnv, ui, type ActionError, type UiNode } from '../gui.ts';
import { clickNamed, guiRandom, typeNamed } from '../os/agent.ts';
import type { Rng } from '../../core/random.ts';

export interface Product {
  id: number;
  name: string;
  category: string;
  price: number;
  rating: number;
  reviews: number;
  colors: string[];
  description: string;
}
interface CartLine {
  product: Product;
  color: string;
  qty: number;
}

const ADJ = ['Classic', 'Compact', 'Deluxe', 'Eco', 'Pro', 'Travel', 'Smart', 'Vintage'];
const NOUNS: [string, string][] = [
  ['Kettle', 'Kitchen'],
  ['Toaster', 'Kitchen'],
  ['Blender', 'Kitchen'],
  ['Backpack', 'Outdoor'],
  ['Tent', 'Outdoor'],
  ['Lantern', 'Outdoor'],
  ['Headphones', 'Electronics'],
  ['Speaker', 'Electronics'],
  ['Desk Lamp', 'Home'],
  ['Pillow', 'Home'],
  ['Mug', 'Kitchen'],
  ['Water Bottle', 'Outdoor'],
];
const COLORS = ['Black', 'White', 'Red', 'Blue', 'Green', 'Silver'];
const FEATURES = [
  'stainless steel body',
  'two-year warranty',
  'quiet operation',
  'recycled materials',
  'fits in a carry-on',
  'dishwasher safe',
  'USB-C charging',
];

export type WebTask = 'buy' | 'cart_two' | 'rating';
type Page = 'home' | 'results' | 'product' | 'cart' | 'checkout' | 'done';

export class WebEnv extends GuiEnv {
  readonly domain = 'web' as const;
  catalog: Product[] = [];
  task!: { kind: WebTask; product: Product; color: string; qty: number };
  page: Page = 'home';
  query = '';
  draftQuery = '';
  resultsPage = 0;
  current: Product | null = null;
  choice = { color: '', qty: 1 };
  cart: CartLine[] = [];
  form = { name: '', address: '', city: '' };
  /** Placed orders: what was bought and where it goes (what a task's success check reads). */
  orders: { no: string; total: number; items: { name: string; color: string; qty: number }[]; shipTo: { name: string; address: string; city: string } }[] = [];
  private history: Page[] = [];

  protected init(rng: Rng) {
    this.catalog = [];
    let id = 1;
    for (const adj of rng.sample(ADJ, 5))
      for (const [noun, category] of rng.sample(NOUNS, 4)) {
        this.catalog.push({
          id: id++,
          name: `${adj} ${noun}`,
          category,
          price: rng.int(8, 180) + rng.pick([0, 0.49, 0.99]),
          rating: rng.int(25, 50) / 10,
          reviews: rng.int(0, 900),
          colors: rng.sample(COLORS, rng.int(1, 3)),
          description: `${rng.pick(FEATURES)}, ${rng.pick(FEATURES)}`,
        });
      }
    const product = rng.pick(this.catalog);
    this.task = { kind: rng.pick(['buy', 'buy', 'cart_two', 'rating'] as const), product, color: rng.pick(product.colors), qty: 2 };
    Object.assign(this, {
      page: 'home',
      query: '',
      draftQuery: '',
      resultsPage: 0,
      current: null,
      choice: { color: '', qty: 1 },
      cart: [],
      form: { name: '', address: '', city: '' },
      orders: [],
      history: [],
    });
    const t = this.task;
    const goal =
      t.kind === 'buy'
        ? `buy one ${t.product.name} in ${t.color}, shipping to Jamie Doe, 12 Elm Street, Springfield`
        : t.kind === 'cart_two'
          ? `put two ${t.product.name} (${t.color}) in the cart`
          : `find the customer rating of the ${t.product.name}`;
    return {
      state: { task: t.kind, product: t.product.name, catalog_size: this.catalog.length },
      system_prompt: (screen: string) => ({
        task_description: `An agent shops on ShopMart, a web store, through the page's accessibility tree. Its goal: ${goal}.`,
        action_space:
          'click(id) | type(id, "text") | select(id, "option") | press("Enter") submits the focused search | scroll("down" | "up") | back(). Ids are the numbers in brackets of the latest page.',
        initial_state: `URL: https://shopmart.example/\n${screen}`,
        demonstrations:
          'Action: type(3, "lamp")\nObservation: the page with the search box value="lamp"\n\nAction: select(9, "Purple")\nObservation:\nError: "Purple" is not an option of element 9; options: Black, White',
        simulation_instruction:
          "You are the web browser showing ShopMart. After each action print the page's accessibility tree (or the error line), numbering elements depth-first from 1. No explanations.",
      }),
    };
  }

  private go(p: Page) {
    this.history.push(this.page);
    this.page = p;
  }
  private search() {
    this.query = this.draftQuery.trim();
    this.resultsPage = 0;
    this.go('results');
  }
  results(): Product[] {
    const words = this.query.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return this.catalog;
    return this.catalog.filter((p) => words.every((w) => `${p.name} ${p.category}`.toLowerCase().includes(w)));
  }
  cartCount() {
    return this.cart.reduce((s, l) => s + l.qty, 0);
  }
  cartTotal() {
    return Math.round(this.cart.reduce((s, l) => s + l.qty * l.product.price, 0) * 100) / 100;
  }

  protected screen(): UiNode {
    const header: UiNode[] = [
      ui('link', 'ShopMart', { onClick: () => this.go('home') }),
      ui('searchbox', 'Search products', {
        value: this.draftQuery,
        onType: (t) => {
          this.draftQuery = t;
        },
      }),
      ui('button', 'Search', { onClick: () => this.search() }),
      ui('link', `Cart (${this.cartCount()})`, { onClick: () => this.go('cart') }),
    ];
    const body: UiNode[] = [];
    let title = 'ShopMart';
    const money = (n: number) => `$${n.toFixed(2)}`;
    switch (this.page) {
      case 'home':
        title = 'Home';
        body.push(ui('heading', 'Welcome to ShopMart'));
        for (const c of ['Kitchen', 'Outdoor', 'Electronics', 'Home'])
          body.push(
            ui('link', c, {
              onClick: () => {
                this.draftQuery = c;
                this.search();
              },
            }),
          );
        break;
      case 'results': {
        title = `Search: ${this.query}`;
        const all = this.results();
        const page = all.slice(this.resultsPage * 5, this.resultsPage * 5 + 5);
        body.push(ui('heading', `${all.length} results for "${this.query}"`));
        for (const p of page)
          body.push(
            ui('link', p.name, {
              onClick: () => {
                this.current = p;
                this.choice = { color: p.colors[0], qty: 1 };
                this.go('product');
              },
            }),
            ui('text', money(p.price)),
          );
        if (all.length === 0) body.push(ui('text', 'No products match your search.'));
        if ((this.resultsPage + 1) * 5 < all.length)
          body.push(
            ui('link', 'Next page', {
              onClick: () => {
                this.resultsPage++;
              },
            }),
          );
        break;
      }
      case 'product': {
        const p = this.current!;
        title = p.name;
        body.push(
          ui('heading', p.name),
          ui('text', money(p.price)),
          ui('text', `Rating: ${p.rating.toFixed(1)} out of 5 (${p.reviews} reviews)`),
          ui('text', p.description),
        );
        body.push(
          ui('combobox', 'Color', {
            value: this.choice.color,
            options: p.colors,
            onSelect: (o) => {
              this.choice.color = o;
            },
          }),
        );
        body.push(
          ui('spinbutton', 'Quantity', {
            value: String(this.choice.qty),
            onType: (t) => {
              const q = Number(t);
              if (!Number.isInteger(q) || q < 1 || q > 10) {
                this.toast = 'Alert: quantity must be between 1 and 10';
                return;
              }
              this.choice.qty = q;
            },
          }),
        );
        body.push(
          ui('button', 'Add to Cart', {
            onClick: () => {
              const line = this.cart.find((l) => l.product === p && l.color === this.choice.color);
              if (line) line.qty += this.choice.qty;
              else this.cart.push({ product: p, color: this.choice.color, qty: this.choice.qty });
              this.toast = `Alert: added ${this.choice.qty} × ${p.name} (${this.choice.color}) to your cart`;
            },
          }),
        );
        break;
      }
      case 'cart':
        title = 'Your cart';
        body.push(ui('heading', 'Shopping cart'));
        for (const l of this.cart)
          body.push(
            ui('text', `${l.product.name}, ${l.color}, qty ${l.qty}, ${money(l.qty * l.product.price)}`),
            ui('button', `Remove ${l.product.name}`, {
              onClick: () => {
                this.cart = this.cart.filter((x) => x !== l);
              },
            }),
          );
        if (!this.cart.length) body.push(ui('text', 'Your cart is empty.'));
        body.push(ui('text', `Total: ${money(this.cartTotal())}`));
        body.push(ui('button', 'Checkout', { states: this.cart.length ? undefined : ['disabled'], onClick: () => this.go('checkout') }));
        break;
      case 'checkout':
        title = 'Checkout';
        body.push(ui('heading', 'Checkout'));
        for (const [k, label] of [
          ['name', 'Full name'],
          ['address', 'Address'],
          ['city', 'City'],
        ] as const)
          body.push(
            ui('textbox', label, {
              value: this.form[k],
              onType: (t) => {
                this.form[k] = t;
              },
            }),
          );
        body.push(ui('text', `Order total: ${money(this.cartTotal())}`));
        body.push(
          ui('button', 'Place order', {
            onClick: () => {
              const missing = (
                [
                  ['name', 'Full name'],
                  ['address', 'Address'],
                  ['city', 'City'],
                ] as const
              )
                .filter(([k]) => !this.form[k].trim())
                .map(([, l]) => l);
              if (missing.length) {
                this.toast = `Alert: please fill in ${missing.join(', ')}`;
                return;
              }
              this.orders.push({
                no: String(this.rng.int(100000, 999999)),
                total: this.cartTotal(),
                items: this.cart.map((l) => ({ name: l.product.name, color: l.color, qty: l.qty })),
                shipTo: { ...this.form },
              });
              this.cart = [];
              this.go('done');
            },
          }),
        );
        break;
      case 'done': {
        const o = this.orders[this.orders.length - 1];
        title = 'Order placed';
        body.push(
          ui('heading', 'Thank you for your order!'),
          ui('text', `Order number: ${o.no}`, { kind: 'runtime_metadata' }),
          ui('text', `Charged: ${money(o.total)}`),
        );
        break;
      }
    }
    return ui('RootWebArea', `${title} | ShopMart`, { children: [ui('banner', undefined, { children: header }), ui('main', undefined, { children: body })] });
  }

  protected globalAction(name: string, args: ActionArg[]): ActionError | undefined {
    if (name === 'press') {
      const k = String(args[0] ?? '');
      if (k === 'Enter') {
        if (this.draftQuery.trim()) this.search();
        return null;
      }
      if (['Tab', 'Escape', 'PageDown', 'PageUp'].includes(k)) return null;
      return `Error: unknown key "${k}"`;
    }
    if (name === 'scroll') return args[0] === 'up' || args[0] === 'down' ? null : 'Error: scroll direction must be "up" or "down"';
    if (name === 'back') {
      const prev = this.history.pop();
      if (prev) this.page = prev;
      return null;
    }
    return undefined;
  }
}

export function webAgent(env: WebEnv, rng: Rng, kind: AgentKind): Agent {
  if (kind === 'random') {
    return new RandomAgent(
      rng.int(3, 12),
      guiRandom(env, rng, 'click', () =>
        rng.pick([formatCall('press', 'Enter'), formatCall('back'), formatCall('scroll', 'down'), formatCall('select', rng.int(1, 12), rng.pick(COLORS))]),
      ),
    );
  }
  const t = env.task;
  const p = t.product;
  const steps: PlanStep[] = [];
  const q = rng.pick([p.name, p.name.split(' ').slice(-1)[0], p.name.toLowerCase()]);
  if (rng.chance(0.2))
    steps.push(
      typeNamed(env, 'Search products', () => typo(rng, q)),
      formatCall('press', 'Enter'),
    );
  steps.push(
    typeNamed(env, 'Search products', () => q),
    rng.chance(0.5) ? formatCall('press', 'Enter') : clickNamed(env, 'Search'),
  );
  // The product may sit on a later results page.
  for (let i = 0; i < 4; i++)
    steps.push(() =>
      env.page === 'results' && env.idOf(p.name) === null && env.idOf('Next page') !== null ? formatCall('click', env.idOf('Next page')!) : null,
    );
  steps.push(clickNamed(env, p.name));
  if (t.kind === 'rating') {
    if (rng.chance(0.4)) steps.push(formatCall('scroll', 'down'));
    return new PlanAgent(steps);
  }
  if (rng.chance(0.2)) steps.push(() => formatCall('select', env.idOf('Color') ?? 1, 'Purple'));
  steps.push(() => formatCall('select', env.idOf('Color') ?? 1, t.color));
  if (t.kind === 'cart_two') steps.push(typeNamed(env, 'Quantity', () => '2'));
  steps.push(clickNamed(env, 'Add to Cart'));
  steps.push(() => formatCall('click', env.findId((n) => n.name?.startsWith('Cart (') ?? false) ?? 1));
  if (t.kind === 'buy') {
    steps.push(clickNamed(env, 'Checkout'));
    if (rng.chance(0.3)) steps.push(clickNamed(env, 'Place order'));
    steps.push(
      typeNamed(env, 'Full name', () => 'Jamie Doe'),
      typeNamed(env, 'Address', () => '12 Elm Street'),
      typeNamed(env, 'City', () => 'Springfield'),
      clickNamed(env, 'Place order'),
    );
  }
  return new PlanAgent(steps);
}

export function webKnowledge(): string {
  return [
    'SHOPMART WEB STORE',
    'Every page is an accessibility tree rooted at RootWebArea "TITLE | ShopMart" with a banner (ShopMart link, "Search products" searchbox, Search button, "Cart (N)" link where N is the number of items) and a main region. Ids are numbered depth-first from 1 on every page.',
    'HOME: heading "Welcome to ShopMart" and category links Kitchen, Outdoor, Electronics, Home (a category link searches for it).',
    'SEARCH RESULTS: heading "N results for "QUERY"", then for each product a link with its name followed by a text with its price ($X.YY), five per page with a "Next page" link. A product matches when every query word appears in its name or category (case-insensitive). No match shows "No products match your search."',
    'PRODUCT PAGE: heading with the name, price, "Rating: R out of 5 (N reviews)", a description, a Color combobox (select one of its options), a Quantity spinbutton (1-10) and an "Add to Cart" button, which shows "Alert: added Q × NAME (COLOR) to your cart".',
    'CART: one text per line "NAME, COLOR, qty Q, $TOTAL" with a "Remove NAME" button, "Total: $X", and a Checkout button (disabled when empty).',
    'CHECKOUT: textboxes Full name, Address, City, "Order total: $X" and "Place order"; missing fields give "Alert: please fill in ...". A placed order shows "Thank you for your order!", a six-digit order number and the amount charged.',
    'ERRORS: "Error: no element with id N on the current screen"; selecting an unknown option gives the list of options.',
  ].join('\n\n');
}
