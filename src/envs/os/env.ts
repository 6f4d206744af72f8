// The os environment: a desktop as an accessibility tree. A taskbar launches a file manager,
// a text editor and a settings window; the agent clicks, types, presses keys and scrolls by
// element id.
import type { ActionArg } from '../action.ts';
import { hhmm } from '../clock.ts';
import { GuiEnv, ui, type ActionError, type UiNode } from '../gui.ts';
import type { Rng } from '../../core/random.ts';

export const OS_TASKS = ['edit_file', 'dark_mode', 'new_folder', 'set_volume'] as const;
export type OsTask = (typeof OS_TASKS)[number];

interface OsFile {
  name: string;
  content: string;
}
interface OsFolder {
  name: string;
  files: OsFile[];
  folders: string[];
}

export interface OsState {
  task: OsTask;
  /** edit_file: the file and the line to add; new_folder: the name; set_volume: the level. */
  target: string;
  text: string;
  folders: OsFolder[];
  window: 'desktop' | 'files' | 'editor' | 'settings';
  folder: string;
  editing: { folder: string; file: string; draft: string; dirty: boolean } | null;
  newFolderDialog: { draft: string } | null;
  settingsPage: 'Appearance' | 'Sound' | 'About';
  darkMode: boolean;
  volume: number;
  scroll: number;
}

const FOLDERS = ['Documents', 'Downloads', 'Pictures', 'Music'];
const DOC_FILES = ['notes.txt', 'todo.txt', 'report.md', 'ideas.txt', 'budget.csv', 'letter.txt'];
const LINES = ['call the plumber', 'renew passport', 'send invoice 42', 'buy printer paper', 'book dentist', 'backup photos'];

export class OsEnv extends GuiEnv {
  readonly domain = 'os' as const;
  s!: OsState;

  protected init(rng: Rng) {
    const folders: OsFolder[] = FOLDERS.map((name) => ({ name, files: [], folders: [] }));
    for (const f of rng.sample(DOC_FILES, rng.int(2, 4))) folders[0].files.push({ name: f, content: rng.sample(LINES, rng.int(1, 3)).join('\n') });
    folders[1].files.push({ name: `setup-${rng.int(1, 9)}.${rng.int(0, 9)}.tar.gz`, content: '(binary)' });
    folders[2].files.push({ name: `IMG_${rng.int(1000, 9999)}.jpg`, content: '(binary)' });
    const task = rng.pick(OS_TASKS);
    const target =
      task === 'edit_file'
        ? folders[0].files[0].name
        : task === 'new_folder'
          ? rng.pick(['Taxes', 'Projects', 'Receipts', 'Travel'])
          : String(rng.int(1, 10) * 10);
    this.s = {
      task,
      target,
      text: rng.pick(LINES),
      folders,
      window: 'desktop',
      folder: 'Home',
      editing: null,
      newFolderDialog: null,
      settingsPage: 'Appearance',
      darkMode: rng.chance(0.3) && task !== 'dark_mode',
      volume: rng.int(2, 9) * 10,
      scroll: 0,
    };
    const goal = {
      edit_file: `open Documents/${target} in the text editor, add the line "${this.s.text}" at the end and save it`,
      dark_mode: 'turn on dark mode in Settings > Appearance',
      new_folder: `create a folder named "${target}" inside Documents`,
      set_volume: `set the output volume to ${target}% in Settings > Sound`,
    }[task];
    return {
      state: { task, target, folders: folders.map((f) => ({ name: f.name, files: f.files.map((x) => x.name) })) },
      system_prompt: (screen: string) => ({
        task_description: `An agent operates a Linux desktop through its accessibility tree. Its goal: ${goal}.`,
        action_space:
          'click(id) | type(id, "text") replaces the text of an editable element | key("ctrl+s" | "Escape" | "Enter") | scroll("up" | "down"). Ids are the numbers in brackets of the latest tree.',
        initial_state: `The desktop, as an accessibility tree:\n${screen}`,
        demonstrations:
          'Action: click(2)\nObservation: the new accessibility tree, e.g.\n[1] desktop "Desktop"\n  [2] window "Files - Home" (focused)\n    [3] button "Back"\n...\n\nAction: click(99)\nObservation:\nError: no element with id 99 on the current screen',
        simulation_instruction:
          'You are the desktop. After each action print the complete accessibility tree of the screen (or the error line), numbering elements depth-first from 1. No explanations.',
      }),
    };
  }

  private folderOf(name: string) {
    return this.s.folders.find((f) => f.name === name)!;
  }

  protected screen(): UiNode {
    const s = this.s;
    const kids: UiNode[] = [];
    if (s.window === 'files') kids.push(this.filesWindow());
    if (s.window === 'editor' && s.editing) kids.push(this.editorWindow());
    if (s.window === 'settings') kids.push(this.settingsWindow());
    kids.push(
      ui('panel', 'Taskbar', {
        children: [
          ui('button', 'Files', {
            onClick: () => {
              s.window = 'files';
              s.scroll = 0;
            },
          }),
          ui('button', 'Text Editor', {
            onClick: () => {
              if (s.editing) s.window = 'editor';
              else this.toast = 'Text Editor: no file open; open one from Files';
            },
          }),
          ui('button', 'Settings', {
            onClick: () => {
              s.window = 'settings';
            },
          }),
          ui('label', hhmm(this.clock.ms), { kind: 'runtime_metadata' }),
        ],
      }),
    );
    return ui('desktop', 'Desktop', { states: s.darkMode ? ['dark theme'] : undefined, children: kids });
  }

  private filesWindow(): UiNode {
    const s = this.s;
    const inHome = s.folder === 'Home';
    const entries: UiNode[] = [];
    if (inHome)
      for (const f of s.folders)
        entries.push(
          ui('folder', f.name, {
            onClick: () => {
              s.folder = f.name;
              s.scroll = 0;
            },
          }),
        );
    else {
      const f = this.folderOf(s.folder);
      for (const sub of f.folders)
        entries.push(
          ui('folder', sub, {
            onClick: () => {
              this.toast = `Files: "${sub}" is empty`;
            },
          }),
        );
      for (const file of f.files)
        entries.push(
          ui('file', file.name, {
            onClick: () => {
              if (file.content === '(binary)') {
                this.toast = `Files: no application installed for "${file.name}"`;
                return;
              }
              s.editing = { folder: f.name, file: file.name, draft: file.content, dirty: false };
              s.window = 'editor';
            },
          }),
        );
    }
    s.scroll = Math.min(s.scroll, Math.max(0, entries.length - 6));
    const shown = entries.slice(s.scroll, s.scroll + 6);
    const children: UiNode[] = [
      ui('button', 'Back', {
        states: inHome ? ['disabled'] : undefined,
        onClick: () => {
          s.folder = 'Home';
          s.scroll = 0;
        },
      }),
      ui('button', 'New Folder', {
        states: inHome ? ['disabled'] : undefined,
        onClick: () => {
          s.newFolderDialog = { draft: '' };
        },
      }),
      ui('label', `Location: /home/user${inHome ? '' : '/' + s.folder}`),
      ui('list', undefined, { children: shown.length ? shown : [ui('label', 'Folder is empty')] }),
    ];
    if (s.newFolderDialog) {
      const d = s.newFolderDialog;
      children.push(
        ui('dialog', 'New Folder', {
          children: [
            ui('textbox', 'Folder name', {
              value: d.draft,
              onType: (t) => {
                d.draft = t;
              },
            }),
            ui('button', 'Create', {
              onClick: () => {
                const f = this.folderOf(s.folder);
                if (d.draft.trim() === '') {
                  this.toast = 'Files: folder name cannot be empty';
                  return;
                }
                if (f.folders.includes(d.draft) || f.files.some((x) => x.name === d.draft)) {
                  this.toast = `Files: "${d.draft}" already exists`;
                  return;
                }
                f.folders.push(d.draft);
                f.folders.sort();
                s.newFolderDialog = null;
              },
            }),
            ui('button', 'Cancel', {
              onClick: () => {
                s.newFolderDialog = null;
              },
            }),
          ],
        }),
      );
    }
    return ui('window', `Files - ${s.folder}`, { states: ['focused'], children });
  }

  private save() {
    const e = this.s.editing!;
    this.folderOf(e.folder).files.find((f) => f.name === e.file)!.content = e.draft;
    e.dirty = false;
    this.toast = `Text Editor: saved ${e.file}`;
  }

  private editorWindow(): UiNode {
    const s = this.s;
    const e = s.editing!;
    return ui('window', `${e.dirty ? '*' : ''}${e.file} - Text Editor`, {
      states: ['focused'],
      children: [
        ui('button', 'Save', { onClick: () => this.save() }),
        ui('button', 'Close', {
          onClick: () => {
            if (e.dirty) {
              this.toast = 'Text Editor: unsaved changes; save first or press Escape to discard';
              return;
            }
            s.editing = null;
            s.window = 'files';
          },
        }),
        ui('textbox', 'Document', {
          value: e.draft,
          onType: (t) => {
            e.draft = t;
            e.dirty = true;
          },
        }),
        ui('label', `Ln ${e.draft.split('\n').length}, ${e.draft.length} chars`),
      ],
    });
  }

  private settingsWindow(): UiNode {
    const s = this.s;
    const nav = (['Appearance', 'Sound', 'About'] as const).map((p) =>
      ui('tab', p, {
        states: s.settingsPage === p ? ['selected'] : undefined,
        onClick: () => {
          s.settingsPage = p;
        },
      }),
    );
    let page: UiNode[];
    if (s.settingsPage === 'Appearance') {
      page = [
        ui('switch', 'Dark mode', {
          states: [s.darkMode ? 'checked' : 'unchecked'],
          onClick: () => {
            s.darkMode = !s.darkMode;
          },
        }),
        ui('label', 'Accent color: Blue'),
      ];
    } else if (s.settingsPage === 'Sound') {
      page = [
        ui('spinbutton', 'Output volume (%)', {
          value: String(s.volume),
          onType: (t) => {
            const v = Number(t);
            if (!Number.isInteger(v) || v < 0 || v > 100) {
              this.toast = 'Settings: volume must be a whole number from 0 to 100';
              return;
            }
            s.volume = v;
          },
        }),
        ui('label', 'Output device: Built-in Speakers'),
      ];
    } else {
      page = [
        ui('label', 'OS: Ubuntu 22.04.4 LTS'),
        ui('label', 'Memory: 15.5 GiB', { kind: 'pre_existing' }),
        ui('label', 'Disk: 512.1 GB', { kind: 'pre_existing' }),
      ];
    }
    return ui('window', 'Settings', {
      states: ['focused'],
      children: [ui('tablist', undefined, { children: nav }), ui('group', s.settingsPage, { children: page })],
    });
  }

  protected globalAction(name: string, args: ActionArg[]): ActionError | undefined {
    const s = this.s;
    if (name === 'key') {
      const k = String(args[0] ?? '').toLowerCase();
      if (k === 'ctrl+s') {
        if (s.window === 'editor' && s.editing) this.save();
        return null;
      }
      if (k === 'escape') {
        if (s.newFolderDialog) s.newFolderDialog = null;
        else if (s.window === 'editor') {
          s.editing = null;
          s.window = 'files';
        } else s.window = 'desktop';
        return null;
      }
      if (['enter', 'tab', 'ctrl+c', 'ctrl+v', 'backspace'].includes(k)) return null;
      return `Error: unknown key "${args[0] ?? ''}"`;
    }
    if (name === 'scroll') {
      const d = args[0];
      if (d !== 'up' && d !== 'down') return 'Error: scroll direction must be "up" or "down"';
      s.scroll = Math.max(0, s.scroll + (d === 'down' ? 3 : -3));
      return null;
    }
    return undefined;
  }

  /** The saved content of a file (tests and agents use it). */
  fileContent(folder: string, file: string): string | undefined {
    return this.folderOf(folder).files.find((f) => f.name === file)?.content;
  }
}
