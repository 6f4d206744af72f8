// Scripted agents for the os desktop.
import { formatCall } from '../action.ts';
import { PlanAgent, RandomAgent, type Agent, type AgentKind, type PlanStep } from '../agent.ts';
import type { GuiEnv } from '../gui.ts';
import type { Rng } from '../../core/random.ts';
import type { OsEnv } from './index.ts';

/** click(id of the element called `name`), or a miss on a wrong id when it is not on screen. */
export function clickNamed(env: GuiEnv, name: string, role?: string, verb = 'click'): PlanStep {
  return () => formatCall(verb, env.idOf(name, role) ?? env.elementCount() + 7);
}
export function typeNamed(env: GuiEnv, name: string, text: () => string, role?: string): PlanStep {
  return () => formatCall('type', env.idOf(name, role) ?? env.elementCount() + 7, text());
}

export function guiRandom(env: GuiEnv, rng: Rng, verb: string, extras: () => string): () => string {
  return () => {
    const n = env.elementCount();
    const r = rng.next();
    if (r < 0.55) return formatCall(verb, rng.int(1, n + (rng.chance(0.15) ? 10 : 0)));
    if (r < 0.75) return formatCall('type', rng.int(1, n), rng.pick(['hello', 'test', '42', 'Alex', 'red', '']));
    return extras();
  };
}

export function osAgent(env: OsEnv, rng: Rng, kind: AgentKind): Agent {
  if (kind === 'random') {
    return new RandomAgent(
      rng.int(3, 12),
      guiRandom(env, rng, 'click', () =>
        rng.chance(0.5) ? formatCall('key', rng.pick(['ctrl+s', 'Escape', 'Enter', 'F13'])) : formatCall('scroll', rng.pick(['up', 'down', 'left'])),
      ),
    );
  }
  const s = env.s;
  const steps: PlanStep[] = [];
  const miss = () => {
    if (rng.chance(0.2)) steps.push(() => formatCall('click', env.elementCount() + rng.int(1, 20)));
  };
  miss();
  switch (s.task) {
    case 'edit_file': {
      if (rng.chance(0.3)) steps.push(clickNamed(env, 'Text Editor'));
      steps.push(clickNamed(env, 'Files'), clickNamed(env, 'Documents'), clickNamed(env, s.target));
      miss();
      steps.push(typeNamed(env, 'Document', () => `${s.editing?.draft ?? ''}\n${s.text}`));
      if (rng.chance(0.3)) steps.push(clickNamed(env, 'Close'));
      steps.push(rng.chance(0.5) ? formatCall('key', 'ctrl+s') : clickNamed(env, 'Save'));
      if (rng.chance(0.5)) steps.push(clickNamed(env, 'Close'));
      break;
    }
    case 'dark_mode':
      steps.push(clickNamed(env, 'Settings'));
      if (rng.chance(0.3)) steps.push(clickNamed(env, 'About'), clickNamed(env, 'Appearance'));
      steps.push(clickNamed(env, 'Dark mode'));
      break;
    case 'new_folder':
      steps.push(clickNamed(env, 'Files'));
      if (rng.chance(0.3)) steps.push(clickNamed(env, 'New Folder'));
      steps.push(clickNamed(env, 'Documents'), clickNamed(env, 'New Folder'));
      if (rng.chance(0.25)) steps.push(clickNamed(env, 'Create'));
      steps.push(
        typeNamed(env, 'Folder name', () => s.target),
        clickNamed(env, 'Create'),
      );
      break;
    case 'set_volume':
      steps.push(clickNamed(env, 'Settings'), clickNamed(env, 'Sound'));
      if (rng.chance(0.3)) steps.push(typeNamed(env, 'Output volume (%)', () => String(Number(s.target) + 100)));
      steps.push(typeNamed(env, 'Output volume (%)', () => s.target));
      break;
  }
  if (rng.chance(0.3)) steps.push(formatCall('key', 'Escape'));
  return new PlanAgent(steps);
}

export function osKnowledge(): string {
  return [
    'DESKTOP ACCESSIBILITY TREE',
    'The desktop is shown as a tree: each line is "[id] role "name"" with optional value="..." and (states), children indented by two spaces. Ids are assigned depth-first from 1 on every screen, so they change when the screen changes.',
    'TASKBAR: buttons Files, Text Editor and Settings, and a clock label (HH:MM).',
    'FILES: a window "Files - FOLDER" with Back and New Folder buttons (disabled in Home), a Location label (/home/user/FOLDER) and a list of at most six entries (scroll to see more). Home holds Documents, Downloads, Pictures and Music. Clicking a folder opens it; clicking a text file opens it in the Text Editor; other files give "Files: no application installed for NAME". New Folder opens a dialog with a "Folder name" textbox and Create / Cancel buttons; an empty or existing name is refused with a message.',
    'TEXT EDITOR: a window "FILE - Text Editor" (prefixed with * when there are unsaved changes) with Save and Close buttons, a "Document" textbox holding the whole text, and a status label "Ln N, M chars". ctrl+s saves ("Text Editor: saved FILE"); Close with unsaved changes is refused; Escape discards and closes.',
    'SETTINGS: tabs Appearance (Dark mode switch, checked/unchecked; when on, the desktop shows the state "dark theme"), Sound (Output volume (%) spinbutton taking 0-100) and About (OS, memory, disk).',
    'ERRORS: an id that is not on screen gives "Error: no element with id N on the current screen"; typing into a non-editable element gives "Error: element N (ROLE) is not editable".',
  ].join('\n\n');
}
