// Desktop tasks: settings, folders and text files in the os environment's accessibility tree.
// Element ids change with every screen, so solvers find elements by name on the live screen.
import { formatCall } from '../action.ts';
import { OsEnv } from '../os/index.ts';
import { clickNamed, typeNamed } from '../os/agent.ts';
import { fail, pass, plan, replaceGoal, str, WORDS } from './common.ts';
import type { DomainTasks, TaskFamily } from './types.ts';

type F = TaskFamily<OsEnv>;
const FOLDERS = ['Documents', 'Downloads', 'Pictures', 'Music'];
const LINES = ['water the plants', 'pay the bill', 'call the bank', 'buy new shoes', 'fix the bike', 'write to Omar', 'return the book'];
const cap = (w: string) => w[0].toUpperCase() + w.slice(1);
const folderOf = (env: OsEnv, name: string) => env.s?.folders.find((f) => f.name === name);

const setVolume: F = {
  name: 'set_volume',
  level: 2,
  draw: (rng, env) => {
    const volume = rng.int(0, 20) * 5;
    if (volume === env.s.volume) return null;
    return { goal: `set the output volume to ${volume}% in Settings > Sound`, params: { volume } };
  },
  check: (env, p) => (env.s?.volume === p.volume ? pass(`the volume is ${p.volume}%`) : fail(`the volume is ${env.s?.volume}%, not ${p.volume}%`)),
  solver: (env, p) =>
    plan(
      clickNamed(env, 'Settings', 'button'),
      clickNamed(env, 'Sound', 'tab'),
      typeNamed(env, 'Output volume (%)', () => str(p, 'volume')),
    ),
  nearMisses: (p) => [
    (env) => plan(clickNamed(env, 'Settings', 'button'), clickNamed(env, 'Sound', 'tab')),
    (env) =>
      plan(
        clickNamed(env, 'Settings', 'button'),
        clickNamed(env, 'Sound', 'tab'),
        typeNamed(env, 'Output volume (%)', () => String((Number(p.volume) + 10) % 110)),
      ),
  ],
};

const newFolder: F = {
  name: 'new_folder',
  level: 3,
  draw: (rng) => {
    const parent = rng.pick(FOLDERS);
    const name = cap(rng.pick(WORDS));
    return { goal: `create a folder named "${name}" inside ${parent}`, params: { parent, name } };
  },
  check: (env, p) =>
    folderOf(env, str(p, 'parent'))?.folders.includes(str(p, 'name'))
      ? pass(`${str(p, 'parent')}/${str(p, 'name')} exists`)
      : fail(`${str(p, 'parent')} has no folder "${str(p, 'name')}"`),
  solver: (env, p) =>
    plan(
      clickNamed(env, 'Files', 'button'),
      clickNamed(env, str(p, 'parent'), 'folder'),
      clickNamed(env, 'New Folder', 'button'),
      typeNamed(env, 'Folder name', () => str(p, 'name')),
      clickNamed(env, 'Create', 'button'),
    ),
  nearMisses: (p) => {
    const other = FOLDERS[(FOLDERS.indexOf(str(p, 'parent')) + 1) % FOLDERS.length];
    return [
      (env) =>
        plan(
          clickNamed(env, 'Files', 'button'),
          clickNamed(env, other, 'folder'),
          clickNamed(env, 'New Folder', 'button'),
          typeNamed(env, 'Folder name', () => str(p, 'name')),
          clickNamed(env, 'Create', 'button'),
        ),
      (env) =>
        plan(
          clickNamed(env, 'Files', 'button'),
          clickNamed(env, str(p, 'parent'), 'folder'),
          clickNamed(env, 'New Folder', 'button'),
          typeNamed(env, 'Folder name', () => str(p, 'name')),
          formatCall('key', 'Escape'),
        ),
    ];
  },
};

const editFile: F = {
  name: 'edit_file',
  level: 3,
  draw: (rng, env) => {
    const file = rng.pick(env.s.folders[0].files).name;
    const line = rng.pick(LINES);
    return { goal: `open Documents/${file} in the text editor, add the line "${line}" at the end and save it`, params: { file, line } };
  },
  check: (env, p, start) => {
    const before = start().fileContent('Documents', str(p, 'file'));
    const now = folderOf(env, 'Documents')?.files.find((f) => f.name === str(p, 'file'))?.content;
    if (before === undefined || now === undefined) return fail(`Documents/${str(p, 'file')} does not exist`);
    const want = [...before.split('\n'), str(p, 'line')];
    while (want.length > 1 && want[want.length - 2].trim() === '') want.splice(want.length - 2, 1);
    const got = now.split('\n').map((l) => l.trimEnd());
    while (got.length && got[got.length - 1] === '') got.pop();
    return got.length === want.length && got.every((l, i) => l === want[i].trimEnd())
      ? pass(`Documents/${str(p, 'file')} ends with the new line`)
      : fail(`Documents/${str(p, 'file')} holds ${JSON.stringify(now.slice(0, 80))}`);
  },
  solver: (env, p) =>
    plan(
      clickNamed(env, 'Files', 'button'),
      clickNamed(env, 'Documents', 'folder'),
      clickNamed(env, str(p, 'file'), 'file'),
      typeNamed(env, 'Document', () => `${env.s.editing?.draft ?? ''}\n${str(p, 'line')}`),
      clickNamed(env, 'Save', 'button'),
    ),
  nearMisses: (p) => [
    (env) =>
      plan(
        clickNamed(env, 'Files', 'button'),
        clickNamed(env, 'Documents', 'folder'),
        clickNamed(env, str(p, 'file'), 'file'),
        typeNamed(env, 'Document', () => `${env.s.editing?.draft ?? ''}\n${str(p, 'line')}`),
      ),
    (env) =>
      plan(
        clickNamed(env, 'Files', 'button'),
        clickNamed(env, 'Documents', 'folder'),
        clickNamed(env, str(p, 'file'), 'file'),
        typeNamed(env, 'Document', () => str(p, 'line')),
        formatCall('key', 'ctrl+s'),
      ),
  ],
};

export const OS_TASK_FAMILIES: F[] = [setVolume, newFolder, editFile];

export const osTasks: DomainTasks<OsEnv> = {
  create: () => new OsEnv(),
  families: OS_TASK_FAMILIES,
  describe: (d, goal) => replaceGoal(d, /Its goal: [\s\S]*$/, `Its goal: ${goal}.`),
};
