// Phone tasks: alarms, contacts and messages in the android environment's apps. Solvers tap
// views by their text on the live screen, scrolling lists to reach a row further down.
import { formatCall } from '../action.ts';
import type { PlanStep } from '../agent.ts';
import { AndroidEnv } from '../android/index.ts';
import { clickNamed, typeNamed } from '../os/agent.ts';
import { fail, pass, plan, replaceGoal, str, WORDS } from './common.ts';
import type { DomainTasks, TaskFamily } from './types.ts';

type F = TaskFamily<AndroidEnv>;
const FIRST = ['Ada', 'Bo', 'Cleo', 'Dev', 'Eva', 'Finn', 'Gia', 'Hugo', 'Ines', 'Jon', 'Kai', 'Lena'];
const LAST = ['Berg', 'Costa', 'Diaz', 'Engel', 'Fox', 'Grant', 'Holm', 'Ito', 'Jansen', 'Kerr'];
const pad = (n: number) => String(n).padStart(2, '0');
const tap = (env: AndroidEnv, name: string) => clickNamed(env, name, undefined, 'tap');
/** Swipes a list until the row is on screen (up to a few times). */
const scrollTo = (env: AndroidEnv, name: string): PlanStep[] =>
  Array.from({ length: 4 }, () => () => (env.idOf(name) === null ? formatCall('swipe', 'up') : null));

const setAlarm: F = {
  name: 'set_alarm',
  level: 3,
  draw: (rng, env) => {
    const time = `${pad(rng.int(0, 23))}:${pad(rng.int(0, 11) * 5)}`;
    if (env.alarms.some((a) => a.time === time)) return null;
    return { goal: `set an alarm for ${time}`, params: { time } };
  },
  check: (env, p) =>
    env.alarms?.some((a) => a.time === str(p, 'time') && a.on) ? pass(`an alarm is on for ${str(p, 'time')}`) : fail(`no alarm is on for ${str(p, 'time')}`),
  solver: (env, p) => {
    const [h, m] = str(p, 'time').split(':');
    return plan(
      tap(env, 'Clock'),
      tap(env, 'Add alarm'),
      typeNamed(env, 'Hour', () => String(Number(h))),
      typeNamed(env, 'Minute', () => m),
      tap(env, 'OK'),
    );
  },
  nearMisses: (p) => {
    const [h, m] = str(p, 'time').split(':');
    return [
      (env) =>
        plan(
          tap(env, 'Clock'),
          tap(env, 'Add alarm'),
          typeNamed(env, 'Hour', () => h),
          typeNamed(env, 'Minute', () => m),
        ),
      (env) =>
        plan(
          tap(env, 'Clock'),
          tap(env, 'Add alarm'),
          typeNamed(env, 'Hour', () => m),
          typeNamed(env, 'Minute', () => h),
          tap(env, 'OK'),
        ),
    ];
  },
};

const addContact: F = {
  name: 'add_contact',
  level: 3,
  draw: (rng, env) => {
    const name = `${rng.pick(FIRST)} ${rng.pick(LAST)}`;
    if (env.contacts.some((c) => c.name === name)) return null;
    const phone = `+1 555 ${rng.int(100, 999)} ${rng.int(1000, 9999)}`;
    return { goal: `add a contact ${name} with phone ${phone}`, params: { name, phone } };
  },
  check: (env, p) => {
    const digits = (s: string) => s.replace(/\D/g, '');
    return env.contacts?.some((c) => c.name.trim() === str(p, 'name') && digits(c.phone) === digits(str(p, 'phone')))
      ? pass(`${str(p, 'name')} is saved with ${str(p, 'phone')}`)
      : fail(`no contact ${str(p, 'name')} with ${str(p, 'phone')}`);
  },
  solver: (env, p) =>
    plan(
      tap(env, 'Contacts'),
      tap(env, 'Add contact'),
      typeNamed(env, 'Name', () => str(p, 'name')),
      typeNamed(env, 'Phone', () => str(p, 'phone')),
      tap(env, 'Save'),
    ),
  nearMisses: (p) => [
    (env) =>
      plan(
        tap(env, 'Contacts'),
        tap(env, 'Add contact'),
        typeNamed(env, 'Name', () => str(p, 'name')),
        tap(env, 'Save'),
      ),
    (env) =>
      plan(
        tap(env, 'Contacts'),
        tap(env, 'Add contact'),
        typeNamed(env, 'Name', () => str(p, 'name')),
        typeNamed(env, 'Phone', () => str(p, 'phone')),
        formatCall('back'),
      ),
  ],
};

const sendMessage: F = {
  name: 'send_message',
  level: 3,
  draw: (rng, env) => {
    const to = rng.pick(env.contacts).name;
    const text = `Bring the ${rng.pick(WORDS)} at ${rng.int(1, 12)}`;
    return { goal: `send "${text}" to ${to}`, params: { to, text } };
  },
  check: (env, p) =>
    env.threads?.some((t) => t.with === str(p, 'to') && t.messages.some((m) => m.from === 'me' && m.text.trim() === str(p, 'text')))
      ? pass(`${str(p, 'to')} got the message`)
      : fail(`no message "${str(p, 'text')}" sent to ${str(p, 'to')}`),
  solver: (env, p) =>
    plan(
      tap(env, 'Contacts'),
      ...scrollTo(env, str(p, 'to')),
      tap(env, str(p, 'to')),
      tap(env, 'Message'),
      typeNamed(env, 'Text message', () => str(p, 'text')),
      tap(env, 'Send'),
    ),
  nearMisses: (p) => [
    (env) =>
      plan(
        tap(env, 'Contacts'),
        ...scrollTo(env, str(p, 'to')),
        tap(env, str(p, 'to')),
        tap(env, 'Message'),
        typeNamed(env, 'Text message', () => str(p, 'text')),
      ),
    (env) => {
      const other = env.contacts.find((c) => c.name !== str(p, 'to'))?.name ?? '';
      return plan(
        tap(env, 'Contacts'),
        ...scrollTo(env, other),
        tap(env, other),
        tap(env, 'Message'),
        typeNamed(env, 'Text message', () => str(p, 'text')),
        tap(env, 'Send'),
      );
    },
  ],
};

export const ANDROID_TASK_FAMILIES: F[] = [setAlarm, addContact, sendMessage];

export const androidTasks: DomainTasks<AndroidEnv> = {
  create: () => new AndroidEnv(),
  families: ANDROID_TASK_FAMILIES,
  describe: (d, goal) => replaceGoal(d, /Its goal: [\s\S]*$/, `Its goal: ${goal}.`),
};
