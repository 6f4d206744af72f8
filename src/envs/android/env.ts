// The android environment: a phone with Contacts, Clock, Settings and Messages, shown as view
// hierarchies; the agent taps, types, swipes, goes back and home.
import type { ActionArg } from '../action.ts';
import { formatCall } from '../action.ts';
import { PlanAgent, RandomAgent, type Agent, type AgentKind, type PlanStep } from '../agent.ts';
import { hhmm } from '../clock.ts';
import { GuiEnv, ui, type ActionError, type UiNode } from '../gui.ts';
import { clickNamed, guiRandom, typeNamed } from '../os/agent.ts';
import type { Rng } from '../../core/random.ts';

interface Contact {
  name: string;
  phone: string;
}
interface Alarm {
  time: string;
  on: boolean;
}
interface Thread {
  with: string;
  messages: { from: 'me' | 'them'; text: string }[];
}
type Screen = 'home' | 'contacts' | 'contact' | 'add_contact' | 'clock' | 'add_alarm' | 'settings' | 'messages' | 'thread';

const NAMES = ['Ana Lima', 'Ben Okafor', 'Chen Wei', 'Dara Kelly', 'Eli Novak', 'Femi Adeyemi', 'Gus Moreau', 'Hana Sato', 'Ivan Petrov', 'Jo Park'];
const TEXTS = ['See you at 6?', 'Thanks!', 'Running late', 'Can you call me?', 'Lunch tomorrow?', 'Got the tickets'];
export type AndroidTask = 'add_contact' | 'set_alarm' | 'wifi_off' | 'send_message';

export class AndroidEnv extends GuiEnv {
  readonly domain = 'android' as const;
  screenName: Screen = 'home';
  stack: Screen[] = [];
  contacts: Contact[] = [];
  alarms: Alarm[] = [];
  threads: Thread[] = [];
  wifi = true;
  bluetooth = false;
  battery = 80;
  scrollTop = 0;
  open: Contact | Thread | null = null;
  draft = { name: '', phone: '', hour: '', minute: '', message: '' };
  task!: { kind: AndroidTask; name: string; phone: string; time: string; text: string };

  protected init(rng: Rng) {
    const names = rng.sample(NAMES, rng.int(4, 7));
    this.contacts = names.map((name) => ({ name, phone: `+1 555 ${rng.int(100, 999)} ${rng.int(1000, 9999)}` })).sort((a, b) => (a.name < b.name ? -1 : 1));
    this.alarms = Array.from({ length: rng.int(1, 3) }, () => ({
      time: `${String(rng.int(5, 9)).padStart(2, '0')}:${rng.pick(['00', '15', '30', '45'])}`,
      on: rng.chance(0.5),
    }));
    this.threads = rng.sample(names, 2).map((w) => ({ with: w, messages: [{ from: 'them', text: rng.pick(TEXTS) }] }));
    this.wifi = true;
    this.bluetooth = rng.chance(0.4);
    this.battery = rng.int(15, 100);
    Object.assign(this, { screenName: 'home', stack: [], scrollTop: 0, open: null, draft: { name: '', phone: '', hour: '', minute: '', message: '' } });
    const kind = rng.pick(['add_contact', 'set_alarm', 'wifi_off', 'send_message'] as const);
    const fresh = NAMES.find((n) => !names.includes(n))!;
    this.task = {
      kind,
      name: kind === 'send_message' ? rng.pick(names) : fresh,
      phone: `+1 555 ${rng.int(100, 999)} ${rng.int(1000, 9999)}`,
      time: `${String(rng.int(5, 11)).padStart(2, '0')}:${rng.pick(['00', '20', '40'])}`,
      text: rng.pick(TEXTS),
    };
    const t = this.task;
    const goal = {
      add_contact: `add a contact ${t.name} with phone ${t.phone}`,
      set_alarm: `set an alarm for ${t.time}`,
      wifi_off: 'turn Wi-Fi off',
      send_message: `send "${t.text}" to ${t.name}`,
    }[kind];
    return {
      state: { task: kind, contacts: this.contacts.map((c) => c.name), alarms: this.alarms.map((a) => a.time) },
      system_prompt: (screen: string) => ({
        task_description: `An agent uses an Android phone through its view hierarchy. Its goal: ${goal}.`,
        action_space:
          'tap(id) | type(id, "text") replaces the text of an EditText | swipe("up" | "down") scrolls lists | back() | home(). Ids are the numbers in brackets of the latest hierarchy.',
        initial_state: `Home screen:\n${screen}`,
        demonstrations:
          'Action: home()\nObservation: the home screen hierarchy with the status bar and app icons\n\nAction: type(4, "hi")\nObservation:\nError: element 4 (TextView) is not editable',
        simulation_instruction:
          'You are the phone. After each action print the view hierarchy of the screen (or the error line), numbering views depth-first from 1. No explanations.',
      }),
    };
  }

  private go(s: Screen) {
    this.stack.push(this.screenName);
    this.screenName = s;
    this.scrollTop = 0;
  }

  /** Contact screen's Message button: the thread with that contact, opened (or started). */
  private messageContact(c: Contact) {
    let t = this.threads.find((x) => x.with === c.name);
    if (!t) {
      t = { with: c.name, messages: [] };
      this.threads.push(t);
    }
    this.open = t;
    this.draft.message = '';
    this.go('thread');
  }

  /** New contact's Save button. */
  private saveContact() {
    if (!this.draft.name.trim()) {
      this.toast = 'Toast: Name is required';
      return;
    }
    this.contacts.push({ name: this.draft.name, phone: this.draft.phone });
    this.contacts.sort((a, b) => (a.name < b.name ? -1 : 1));
    this.toast = `Toast: ${this.draft.name} saved`;
    this.screenName = this.stack.pop() ?? 'contacts';
  }

  /** New alarm's OK button. */
  private saveAlarm() {
    const h = Number(this.draft.hour),
      m = Number(this.draft.minute);
    if (!Number.isInteger(h) || h < 0 || h > 23 || !Number.isInteger(m) || m < 0 || m > 59 || this.draft.minute === '') {
      this.toast = 'Toast: Enter a valid time';
      return;
    }
    const time = `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
    this.alarms.push({ time, on: true });
    this.alarms.sort((a, b) => (a.time < b.time ? -1 : 1));
    this.toast = `Toast: Alarm set for ${time}`;
    this.screenName = this.stack.pop() ?? 'clock';
  }

  protected screen(): UiNode {
    const status = ui('LinearLayout', 'status_bar', {
      children: [
        ui('TextView', hhmm(this.clock.ms), { kind: 'runtime_metadata' }),
        ui('TextView', `${this.wifi ? 'Wi-Fi' : 'No Wi-Fi'} · ${this.battery}%`, { kind: 'runtime_metadata' }),
      ],
    });
    const body: UiNode[] = [];
    const list = (items: UiNode[]) => {
      this.scrollTop = Math.min(this.scrollTop, Math.max(0, items.length - 5));
      return ui('RecyclerView', undefined, { children: items.slice(this.scrollTop, this.scrollTop + 5) });
    };
    let title = 'Launcher';
    switch (this.screenName) {
      case 'home':
        for (const app of ['Contacts', 'Clock', 'Settings', 'Messages'] as const) {
          body.push(ui('ImageButton', app, { onClick: () => this.go(app.toLowerCase() as Screen) }));
        }
        break;
      case 'contacts':
        title = 'Contacts';
        body.push(
          list(
            this.contacts.map((c) =>
              ui('TextView', c.name, {
                onClick: () => {
                  this.open = c;
                  this.go('contact');
                },
              }),
            ),
          ),
        );
        body.push(
          ui('FloatingActionButton', 'Add contact', {
            onClick: () => {
              this.draft.name = '';
              this.draft.phone = '';
              this.go('add_contact');
            },
          }),
        );
        break;
      case 'contact': {
        const c = this.open as Contact;
        title = c.name;
        body.push(ui('TextView', c.phone), ui('Button', 'Call'), ui('Button', 'Message', { onClick: () => this.messageContact(c) }));
        break;
      }
      case 'add_contact':
        title = 'New contact';
        body.push(
          ui('EditText', 'Name', {
            value: this.draft.name,
            onType: (t) => {
              this.draft.name = t;
            },
          }),
        );
        body.push(
          ui('EditText', 'Phone', {
            value: this.draft.phone,
            onType: (t) => {
              this.draft.phone = t;
            },
          }),
        );
        body.push(ui('Button', 'Save', { onClick: () => this.saveContact() }));
        break;
      case 'clock':
        title = 'Alarms';
        body.push(
          list(
            this.alarms.map((a) =>
              ui('Switch', a.time, {
                states: [a.on ? 'checked' : 'unchecked'],
                onClick: () => {
                  a.on = !a.on;
                },
              }),
            ),
          ),
        );
        body.push(
          ui('FloatingActionButton', 'Add alarm', {
            onClick: () => {
              this.draft.hour = '';
              this.draft.minute = '';
              this.go('add_alarm');
            },
          }),
        );
        break;
      case 'add_alarm':
        title = 'New alarm';
        body.push(
          ui('EditText', 'Hour', {
            value: this.draft.hour,
            onType: (t) => {
              this.draft.hour = t;
            },
          }),
        );
        body.push(
          ui('EditText', 'Minute', {
            value: this.draft.minute,
            onType: (t) => {
              this.draft.minute = t;
            },
          }),
        );
        body.push(ui('Button', 'OK', { onClick: () => this.saveAlarm() }));
        break;
      case 'settings':
        title = 'Settings';
        body.push(
          ui('Switch', 'Wi-Fi', {
            states: [this.wifi ? 'checked' : 'unchecked'],
            onClick: () => {
              this.wifi = !this.wifi;
            },
          }),
        );
        body.push(
          ui('Switch', 'Bluetooth', {
            states: [this.bluetooth ? 'checked' : 'unchecked'],
            onClick: () => {
              this.bluetooth = !this.bluetooth;
            },
          }),
        );
        body.push(ui('TextView', 'Android version 14'), ui('TextView', 'Build UQ1A.240205.004', { kind: 'pre_existing' }));
        break;
      case 'messages':
        title = 'Messages';
        body.push(
          list(
            this.threads.map((t) =>
              ui('TextView', `${t.with}: ${t.messages[t.messages.length - 1]?.text ?? ''}`, {
                onClick: () => {
                  this.open = t;
                  this.draft.message = '';
                  this.go('thread');
                },
              }),
            ),
          ),
        );
        break;
      case 'thread': {
        const t = this.open as Thread;
        title = t.with;
        body.push(list(t.messages.map((m) => ui('TextView', `${m.from === 'me' ? 'You' : t.with}: ${m.text}`))));
        body.push(
          ui('EditText', 'Text message', {
            value: this.draft.message,
            onType: (x) => {
              this.draft.message = x;
            },
          }),
        );
        body.push(
          ui('ImageButton', 'Send', {
            onClick: () => {
              if (!this.draft.message.trim()) return;
              t.messages.push({ from: 'me', text: this.draft.message });
              this.draft.message = '';
            },
          }),
        );
        break;
      }
    }
    return ui('FrameLayout', title, { children: [status, ...body] });
  }

  protected globalAction(name: string, args: ActionArg[]): ActionError | undefined {
    if (name === 'back') {
      this.screenName = this.stack.pop() ?? 'home';
      this.scrollTop = 0;
      return null;
    }
    if (name === 'home') {
      this.screenName = 'home';
      this.stack = [];
      return null;
    }
    if (name === 'swipe') {
      const d = args[0];
      if (!['up', 'down', 'left', 'right'].includes(String(d))) return 'Error: swipe direction must be one of up, down, left, right';
      if (d === 'up') this.scrollTop += 2;
      if (d === 'down') this.scrollTop = Math.max(0, this.scrollTop - 2);
      return null;
    }
    return undefined;
  }
}

export function androidAgent(env: AndroidEnv, rng: Rng, kind: AgentKind): Agent {
  if (kind === 'random') {
    return new RandomAgent(
      rng.int(3, 12),
      guiRandom(env, rng, 'tap', () => rng.pick([formatCall('back'), formatCall('home'), formatCall('swipe', rng.pick(['up', 'down', 'sideways']))])),
    );
  }
  const t = env.task;
  const steps: PlanStep[] = [];
  const tap = (name: string) => clickNamed(env, name, undefined, 'tap');
  if (rng.chance(0.2)) steps.push(tap(rng.pick(['Clock', 'Messages', 'Settings'])), formatCall('back'));
  switch (t.kind) {
    case 'add_contact':
      steps.push(tap('Contacts'), tap('Add contact'));
      if (rng.chance(0.25)) steps.push(tap('Save'));
      steps.push(
        typeNamed(env, 'Name', () => t.name),
        typeNamed(env, 'Phone', () => t.phone),
        tap('Save'),
      );
      if (rng.chance(0.4)) steps.push(formatCall('swipe', 'up'));
      break;
    case 'set_alarm': {
      const [h, m] = t.time.split(':');
      steps.push(
        tap('Clock'),
        tap('Add alarm'),
        typeNamed(env, 'Hour', () => h),
      );
      if (rng.chance(0.25))
        steps.push(
          typeNamed(env, 'Minute', () => '75'),
          tap('OK'),
        );
      steps.push(
        typeNamed(env, 'Minute', () => m),
        tap('OK'),
      );
      break;
    }
    case 'wifi_off':
      steps.push(tap('Settings'));
      if (rng.chance(0.3)) steps.push(tap('Bluetooth'), tap('Bluetooth'));
      steps.push(tap('Wi-Fi'));
      break;
    case 'send_message':
      steps.push(tap('Contacts'));
      for (let i = 0; i < 3; i++) steps.push(() => (env.idOf(t.name) === null ? formatCall('swipe', 'up') : null));
      steps.push(
        tap(t.name),
        tap('Message'),
        typeNamed(env, 'Text message', () => t.text),
        tap('Send'),
      );
      break;
  }
  if (rng.chance(0.4)) steps.push(formatCall(rng.pick(['home', 'back'])));
  return new PlanAgent(steps);
}

export function androidKnowledge(): string {
  return [
    'ANDROID PHONE VIEW HIERARCHY',
    'Each screen is a FrameLayout titled with the screen name; its first child is the status bar (time HH:MM, "Wi-Fi · N%" or "No Wi-Fi · N%" battery). Views are "[id] Class "text"" with value="..." for EditText content and (checked)/(unchecked) for switches; ids are numbered depth-first from 1. Lists (RecyclerView) show five rows; swipe("up") scrolls down the list by two rows, swipe("down") back.',
    'LAUNCHER: ImageButtons Contacts, Clock, Settings, Messages.',
    'CONTACTS: the contacts sorted by name and an "Add contact" button. A contact screen shows the phone number and Call / Message buttons. "New contact" has EditTexts Name and Phone and a Save button; saving without a name shows "Toast: Name is required", otherwise "Toast: NAME saved" and returns to the list.',
    'CLOCK: alarms as switches labelled HH:MM, sorted, and "Add alarm". "New alarm" has EditTexts Hour (0-23) and Minute (0-59) and OK; an invalid time shows "Toast: Enter a valid time"; a valid one "Toast: Alarm set for HH:MM", switched on.',
    'SETTINGS: switches Wi-Fi and Bluetooth, the Android version and build number.',
    'MESSAGES: one row per conversation, "NAME: last message". A conversation lists "NAME: text" and "You: text" lines, an EditText "Text message" and a Send button.',
    'NAVIGATION: back() returns to the previous screen (the launcher at the bottom of the stack); home() goes to the launcher. An id not on screen gives "Error: no element with id N on the current screen".',
  ].join('\n\n');
}
