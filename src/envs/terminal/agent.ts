// Scripted agents for the terminal environment.
import { PlanAgent, RandomAgent, typo, type Agent, type AgentKind, type PlanStep } from '../agent.ts';
import type { Rng } from '../../core/random.ts';
import { TODO_ITEMS, type TerminalEnv } from './index.ts';

export function terminalAgent(env: TerminalEnv, rng: Rng, kind: AgentKind): Agent {
  return kind === 'goal' ? new PlanAgent(goalPlan(env, rng)) : new RandomAgent(rng.int(3, 14), randomAction(env, rng));
}

function goalPlan(env: TerminalEnv, rng: Rng): PlanStep[] {
  const p = env.state.project;
  const slip = (right: string, wrong: string) => (rng.chance(0.25) ? [wrong, right] : [right]);
  const steps: PlanStep[] = [];
  if (rng.chance(0.5)) steps.push('pwd');
  if (rng.chance(0.7)) steps.push(rng.pick(['ls', 'ls -a', 'ls -l']));
  steps.push(...slip(`cd ${p}`, `cd ${typo(rng, p)}`));
  steps.push(rng.pick(['ls', 'ls -l', 'ls -la', 'find . -type f']));
  switch (env.state.task) {
    case 'count_errors':
      if (rng.chance(0.5)) steps.push(rng.pick(['head -n 5 logs/app.log', 'tail -n 3 logs/app.log', 'cat logs/app.log']));
      steps.push(...slip('grep -c ERROR logs/app.log', 'grep -c ERROR log/app.log'));
      if (rng.chance(0.5)) steps.push('grep -n ERROR logs/app.log');
      steps.push(rng.pick(['grep ERROR logs/app.log | wc -l > errors.txt', 'grep -c ERROR logs/app.log > errors.txt']));
      steps.push('cat errors.txt');
      break;
    case 'backup_csv':
      steps.push('ls data');
      steps.push(...slip('mkdir backup', 'mkdir backup/csv'));
      steps.push(...slip('cp data/*.csv backup/', 'cp data backup'));
      steps.push(rng.pick(['ls -l backup', 'ls backup']));
      if (rng.chance(0.5)) steps.push('wc -l data/sales.csv backup/sales.csv');
      break;
    case 'todo': {
      const item = rng.pick(TODO_ITEMS);
      steps.push(...slip('cat notes.txt', 'cat note.txt'));
      steps.push(`echo "${item}" >> notes.txt`);
      if (rng.chance(0.5)) steps.push('tail -n 2 notes.txt');
      steps.push(rng.pick(['sort notes.txt | uniq', 'sort -u notes.txt']));
      if (rng.chance(0.4)) steps.push('sort notes.txt | uniq -c | sort -rn | head -n 3');
      break;
    }
    case 'python_lines':
      steps.push(...slip('find . -name "*.py"', 'find . -name *.py -typ f'));
      steps.push(rng.pick(['wc -l src/main.py src/utils.py', 'wc -l src/*.py']));
      if (rng.chance(0.5)) steps.push('grep -n def src/*.py');
      if (rng.chance(0.3)) steps.push('head -n 3 src/main.py');
      break;
    case 'archive_logs':
      steps.push('ls logs');
      steps.push('mkdir archive');
      steps.push(...slip('mv logs/*.log archive/', 'mv logs/*.log archiv/'));
      steps.push('ls archive');
      steps.push('find . -name "*.tmp"');
      steps.push(...slip('rm -f *.tmp', 'rm tmp'));
      steps.push('ls');
      break;
    case 'set_env':
      steps.push(...slip('export APP_ENV=staging', 'export APP ENV=staging'));
      steps.push('echo $APP_ENV');
      if (rng.chance(0.5)) steps.push('env | grep APP');
      steps.push('echo "APP_ENV=$APP_ENV" > env.txt');
      steps.push('cat env.txt');
      break;
  }
  if (rng.chance(0.3)) steps.push(rng.pick(['history', 'ls -l', 'cd ..', 'date']));
  return steps;
}

const TYPO_CMDS = ['sl', 'cta', 'gerp', 'grpe', 'mkdri', 'pdw', 'cd..', 'python', 'vim', 'll'];

function randomAction(env: TerminalEnv, rng: Rng): () => string {
  const files = () => env.state.files.map((f) => f.slice(env.state.home.length + 1)).filter((f) => !f.startsWith('.'));
  const rel = (f: string) => {
    const cwd = env.shell.cwd;
    const abs = `${env.state.home}/${f}`;
    return abs.startsWith(cwd + '/') ? abs.slice(cwd.length + 1) : abs;
  };
  const words = ['ERROR', 'INFO', 'def', 'import', 'north', 'widget', 'TODO', 'fix'];
  return () => {
    const f = rel(rng.pick(files()));
    switch (rng.int(0, 17)) {
      case 0:
        return rng.pick(['ls', 'ls -l', 'ls -la', 'ls -a']);
      case 1:
        return 'pwd';
      case 2:
        return `cd ${rng.pick(['..', '~', '/tmp', env.state.project, `${env.state.project}/src`, `${env.state.project}/data`, 'nowhere'])}`;
      case 3:
        return `cat ${f}`;
      case 4:
        return `cat ${typo(rng, f)}`;
      case 5:
        return `head -n ${rng.int(1, 5)} ${f}`;
      case 6:
        return `tail -n ${rng.int(1, 4)} ${f}`;
      case 7:
        return `wc -l ${f}`;
      case 8:
        return `grep ${rng.chance(0.5) ? '-n ' : ''}${rng.pick(words)} ${f}`;
      case 9:
        return rng.pick(['date', 'whoami', 'ps', 'history', 'env']);
      case 10:
        return `mkdir ${rng.chance(0.5) ? '-p ' : ''}${rng.pick(['tmp', 'out', 'build/x', 'notes'])}`;
      case 11:
        return `touch ${rng.pick(['a.txt', 'todo.md', 'out/log.txt'])}`;
      case 12:
        return `echo ${rng.pick(['hello', 'done', 'build ok', '$HOME', '$USER'])} ${rng.pick(['>', '>>'])} ${rng.pick(['a.txt', 'log.txt', 'out/x.txt'])}`;
      case 13:
        return `${rng.pick(TYPO_CMDS)}${rng.chance(0.5) ? ' ' + f : ''}`;
      case 14:
        return `rm ${rng.pick(['a.txt', 'old.log', '-r out', 'tmp'])}`;
      case 15:
        return `find ${rng.pick(['.', env.state.project, '/tmp'])} -name "${rng.pick(['*.py', '*.log', '*.csv', '*.md'])}"`;
      case 16:
        return `cat ${f} | ${rng.pick(['sort', 'wc -l', 'head -n 2', 'grep -c a', 'sort | uniq -c'])}`;
      default:
        return `cp ${f} ${rng.pick(['/tmp/', 'copy.txt', 'backup/'])}`;
    }
  };
}
