// `lwm optimize`: every bad argument or file gets an error naming it; the whole CLI (bin/lwm.mjs)
// runs 3 offline rounds with the copy-last baseline and the local judge, deterministically, and
// writes the lineage; an OpenAI-compatible server here on 127.0.0.1 plays the simulator and the
// optimizer LLM (a malformed reply and one that drops a placeholder are refused with the reason
// kept, and the loop goes on); --resume continues a run without redoing its rounds, after a
// finished run and after a killed one.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../main.ts';
import { captureIO } from '../testing.ts';
import { OLD_OPTIMIZER_KEY, type LoopState } from '../../core/optimize/loop.ts';
import { BLOCK_BEGIN, BLOCK_END, OLD_BLOCK_BEGIN, OLD_BLOCK_END } from '../../core/optimize/offline.ts';
import { BUILTIN_TEMPLATES } from '../../core/templates/builtin.ts';
import { renderSystem } from '../../core/templates/render.ts';
import { candidateTemplate } from '../../core/optimize/evaluate.ts';
import { generateTrajectories } from '../../envs/generate.ts';
import { toAgentWorldBenchRecords } from '../../core/formats/agentworldbench.ts';

let tmp: string;
const path = (n: string) => join(tmp, n);
beforeEach(async () => (tmp = await mkdtemp(join(tmpdir(), 'lwm-optimize-'))));
afterEach(() => rm(tmp, { recursive: true, force: true }));

async function lwm(...argv: string[]) {
  const io = captureIO();
  const code = await main(['optimize', ...argv], io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

const BASE = ['--domain', 'terminal,mcp', '--n', '6', '--dev', '5', '--test', '3', '--backend', 'copy-last', '--candidates', '2'];
const readJson = (p: string) => JSON.parse(readFileSync(p, 'utf8'));

describe('lwm optimize: argument and file errors say what and where', () => {
  it('usage errors (exit 2)', async () => {
    const cases: [string[], RegExp][] = [
      [['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last'], /-o DIR is required/],
      [['--domain', 'mcp', '--backend', 'copy-last', '-o', path('x')], /--template FILE is required/],
      [['--template', 'v0', '--domain', 'mcp', '-o', path('x')], /--backend is required/],
      [['--template', 'v0', '--backend', 'copy-last', '-o', path('x')], /give --data FILE .* or --domain D/],
      [['--template', 'v0', '--domain', 'mcp', '--data', 'f', '--backend', 'copy-last', '-o', path('x')], /--data FILE or --domain D, not both/],
      [['--template', 'v0', '--domain', 'nowhere', '--backend', 'copy-last', '-o', path('x')], /--domain: unknown domain "nowhere"; expected one of/],
      [
        ['--template', 'v0', '--domain', 'mcp', '--gen-seed', '1', '--n', '1', '--eval-fraction', '0.5', '--backend', 'copy-last', '-o', path('x')],
        /--eval-fraction is for --data FILE/,
      ],
      [
        ['--template', 'v0', '--domain', 'mcp', '--backend', 'gpt', '-o', path('x')],
        /--backend must be one of local, onnx, endpoint, copy-last, reference, got "gpt"/,
      ],
      [['--template', 'v0', '--domain', 'mcp', '--backend', 'endpoint', '--model', 'm', '-o', path('x')], /--backend endpoint needs --base-url and --model/],
      [['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--base-url', 'http://h/v1', '-o', path('x')], /--base-url is for --backend endpoint/],
      [
        ['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--judge', 'endpoint', '--judge-model', 'j', '-o', path('x')],
        /--judge endpoint needs --judge-base-url and --judge-model/,
      ],
      [
        ['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--judge-temperature', '0.2', '-o', path('x')],
        /--judge-temperature is for --judge endpoint/,
      ],
      [['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--judge', 'gpt', '-o', path('x')], /--judge must be local or endpoint, got "gpt"/],
      [
        ['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--optimizer', 'endpoint', '--optimizer-model', 'o', '-o', path('x')],
        /--optimizer endpoint needs --optimizer-base-url and --optimizer-model/,
      ],
      [
        ['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--optimizer-model', 'o', '-o', path('x')],
        /--optimizer-model is for --optimizer endpoint/,
      ],
      [
        [
          '--template',
          'v0',
          '--domain',
          'mcp',
          '--backend',
          'copy-last',
          '--optimizer',
          'endpoint',
          '--optimizer-model',
          'o',
          '--optimizer-base-url',
          'file:///x',
          '-o',
          path('x'),
        ],
        /--optimizer-base-url must be an http:\/\/ or https:\/\/ URL/,
      ],
      [
        ['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--optimizer', 'genetic', '-o', path('x')],
        /--optimizer must be offline or endpoint, got "genetic"/,
      ],
      [
        ['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--rounds', '0', '-o', path('x')],
        /--rounds must be an integer from 1 to 100, got "0"/,
      ],
      [
        ['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--candidates', 'many', '-o', path('x')],
        /--candidates must be an integer from 1 to 20, got "many"/,
      ],
      [
        ['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--level', '1.5', '-o', path('x')],
        /--level must be a number from 0.5 to 0.999, got "1.5"/,
      ],
      [['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--margin=-1', '-o', path('x')], /--margin must be a number from 0 to 100, got "-1"/],
      [['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--budget', '0', '-o', path('x')], /--budget must be an integer from 1/],
      [['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--dev', '1', '-o', path('x')], /--dev must be an integer from 2/],
      [['--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '--bogus', '-o', path('x')], /Unknown option '--bogus'/],
      [['stray', '--template', 'v0', '--domain', 'mcp', '--backend', 'copy-last', '-o', path('x')], /unexpected argument "stray"/],
    ];
    for (const [argv, message] of cases) {
      const r = await lwm(...argv);
      expect(r.stderr, argv.join(' ')).toMatch(message);
      expect(r.stderr).toMatch(/^lwm optimize: /);
      expect(r.code, argv.join(' ')).toBe(2);
    }
  });

  it('file errors name the file and, in a template, the line (exit 1)', async () => {
    await writeFile(path('bad.jinja'), 'You simulate {{ domain }}.\n{{ tool_list }}\n{% for turn in history %}{{ turn.action }}{% endfor %}{{ action }}\n');
    await writeFile(path('open.jinja'), 'You simulate {{ domain }}.\n{% if domain %}\n{% for turn in history %}{% endfor %}{{ action }}\n');
    await writeFile(path('bad.json'), '{"text": 3}');
    await writeFile(path('torn.json'), '{"text": "a');
    await writeFile(path('domains.json'), JSON.stringify({ ...BUILTIN_TEMPLATES.v1, domains: { mcp: BUILTIN_TEMPLATES.v2.text } }));
    const run = (...argv: string[]) => lwm('--domain', 'mcp', '--backend', 'copy-last', '-o', path('out'), ...argv);
    expect((await run('--template', path('missing.json'))).stderr).toMatch(
      /missing\.json: cannot read \(ENOENT: no such file or directory\) \(--template; built-in versions: v0, v1, v2, compact\)/,
    );
    expect((await run('--template', path('bad.jinja'))).stderr).toMatch(/bad\.jinja: line 2: unknown variable "tool_list"/);
    expect((await run('--template', path('open.jinja'))).stderr).toMatch(/open\.jinja: line 2: \{% if %\} is never closed/);
    expect((await run('--template', path('bad.json'))).stderr).toMatch(/bad\.json: a template JSON needs a "text" string/);
    expect((await run('--template', path('torn.json'))).stderr).toMatch(/torn\.json: looks like JSON but does not parse/);
    const d = await run('--template', path('domains.json'));
    expect(d.stderr).toMatch(/has per-domain texts \(mcp\); .* pick one with --text-for DOMAIN/);
    expect(d.code).toBe(2);
    expect((await run('--template', path('domains.json'), '--text-for', 'search')).stderr).toMatch(
      /--text-for "search": .* has no text for that domain \(it has: mcp\)/,
    );
    const nodata = await lwm('--template', 'v0', '--data', path('none.jsonl'), '--backend', 'copy-last', '-o', path('out'));
    expect(nodata.stderr).toMatch(/none\.jsonl: cannot read \(ENOENT: no such file or directory\) \(--data\)/);
    expect(nodata.code).toBe(1);
    const ck = await lwm(
      '--template',
      'v0',
      '--domain',
      'mcp',
      '--n',
      '2',
      '--dev',
      '2',
      '--test',
      '0',
      '--backend',
      'local',
      '--model',
      path('missing.safetensors'),
      '-o',
      path('ck'),
    );
    expect(ck.stderr).toMatch(/lwm optimize: .*missing\.safetensors: cannot read \(ENOENT\)/);
    expect(ck.code).toBe(1);
    await writeFile(path('afile'), 'x');
    expect((await lwm('--template', 'v0', ...BASE, '-o', path('afile'))).stderr).toMatch(/afile: cannot write the run there \(not a directory\) \(-o\)/);
    expect(existsSync(path('out'))).toBe(false);
  });

  it('refuses to overwrite a run, and to resume what is not one or with other settings', async () => {
    const dir = path('run');
    expect((await lwm('--template', 'v0', ...BASE, '--rounds', '1', '-o', dir)).code).toBe(0);
    expect((await lwm('--template', 'v0', ...BASE, '--rounds', '1', '-o', dir)).stderr).toMatch(
      /run already holds an optimization run \(state\.json\); add --resume/,
    );
    expect((await lwm('--resume', '-o', path('nothing'))).stderr).toMatch(/nothing: nothing to resume \(no state\.json and run\.json/);
    const other = await lwm('--resume', '--seed', '5', '-o', dir);
    expect(other.stderr).toMatch(/--seed "5" differs from the run being resumed in .*run \(not given\)/);
    expect(other.code).toBe(2);
    // The run's own values, or a default given explicitly (in any spelling of its number), are no change.
    const same = await lwm('--resume', '--seed', '0', '--level', '0.950', '--judge', 'local', '--candidates', '2', '--rounds', '1', '-o', dir);
    expect(same.stderr).not.toMatch(/differs/);
    expect(same.code).toBe(0);
    expect((await lwm('--resume', '--backend', 'reference', '-o', dir)).stderr).toMatch(
      /--backend "reference" differs from the run being resumed in .* \("copy-last"\)/,
    );
    await writeFile(join(dir, 'state.json'), '{"versions": [');
    const torn = await lwm('--resume', '--rounds', '2', '-o', dir);
    expect(torn.stderr).toMatch(/run\/state\.json: cannot read it to resume \(/);
    expect(torn.code).toBe(1);
  });

  it('is in lwm --help, and has its own --help', async () => {
    const io = captureIO();
    expect(await main(['--help'], io)).toBe(0);
    expect(io.stdout).toMatch(/lwm optimize --template F --data F -o DIR/);
    const h = await lwm('--help');
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/^Usage: lwm optimize --template FILE/);
    expect(h.stdout).toMatch(/--resume +continue the run in DIR/);
  });
});

describe('lwm optimize --data', () => {
  it('reads trajectories (every turn, or the eval split) and AgentWorldBench records, and says how many samples', async () => {
    const trajectories = [...generateTrajectories('terminal', 5, 2), ...generateTrajectories('search', 5, 2)];
    await writeFile(path('t.jsonl'), trajectories.map((t) => JSON.stringify(t)).join('\n') + '\n');
    const turns = trajectories.reduce((n, t) => n + t.turns.length, 0);
    const common = ['--template', 'v2', '--backend', 'reference', '--rounds', '1', '--candidates', '1', '--dev', '3', '--test', '2'];
    const a = await lwm(...common, '--data', path('t.jsonl'), '-o', path('a'));
    expect(a.stderr).toContain(`t.jsonl: 10 trajectories; ${turns} turns\n`);
    expect(a.stderr).toContain('6 dev and 4 test samples (3 and 2 per domain)');
    expect(a.code).toBe(0);
    const half = await lwm(...common, '--data', path('t.jsonl'), '--eval-fraction', '0.5', '-o', path('b'));
    expect(half.stderr).toMatch(/10 trajectories; \d+ turns in the eval split \(fraction 0\.5, seed 0\)/);
    const records = trajectories.flatMap((t) => toAgentWorldBenchRecords(t));
    await writeFile(path('awb.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const c = await lwm(...common, '--data', path('awb.jsonl'), '-o', path('c'));
    expect(c.code).toBe(0);
    expect(readJson(path('c/splits.json')).dev).toHaveLength(6);
    // The same turns as records or as trajectories: the same dev samples and scores.
    expect(readJson(path('c/lineage.json')).versions[0].mean).toBe(readJson(path('a/lineage.json')).versions[0].mean);
  });
});

describe('lwm optimize: the whole command (bin/lwm.mjs)', () => {
  const bin = fileURLToPath(new URL('../../../bin/lwm.mjs', import.meta.url));
  const runBin = (dir: string) =>
    spawnSync(
      process.execPath,
      [bin, 'optimize', '--template', 'v1', ...BASE, '--rounds', '3', '--judge', 'local', '--optimizer', 'offline', '--seed', '3', '-o', dir],
      { encoding: 'utf8' },
    );

  it('runs 3 offline rounds with copy-last and the local judge, writes the lineage, and does it again identically', () => {
    const r = runBin(path('a'));
    expect(r.stderr).toMatch(/lwm optimize: start v0 on dev: 10\/10/);
    expect(r.stderr).toMatch(/lwm optimize: round 3\/3 r3c2 on dev: 10\/10/);
    expect(r.stderr).toMatch(/lwm optimize: test v0 \(best\) on test: 6\/6/);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Rounds\nround +candidates +valid +accepted +best +dev mean\n/);
    expect(r.stdout).toMatch(/\n3 +2 +2 +0 +v0 +\d+\.\d\n/);
    expect(r.stdout).toMatch(/\nr1c1 +v0 +rejected +\d+\.\d +\+0\.0 \[0\.0, 0\.0\] +added "/);
    expect(r.stdout).toMatch(/Held-out test split, v0: mean \d+\.\d/);
    const dir = path('a');
    expect(readdirSync(dir).sort()).toEqual(['best.json', 'lineage.json', 'run.json', 'splits.json', 'state.json', 'versions']);
    const lineage = readJson(join(dir, 'lineage.json'));
    expect(lineage.versions.map((v: { id: string }) => v.id)).toEqual(['v0', 'r1c1', 'r1c2', 'r2c1', 'r2c2', 'r3c1', 'r3c2']);
    expect(lineage.rounds).toHaveLength(3);
    expect(lineage.stopped).toBe('done');
    expect(lineage.calls).toEqual({ model: 10 * 7 + 6, judge: 10 * 7 + 6 });
    expect(readFileSync(join(dir, 'versions', 'v0.jinja'), 'utf8')).toBe(BUILTIN_TEMPLATES.v1.text);
    const c = readJson(join(dir, 'versions', 'r1c1.json'));
    expect(c).toMatchObject({ id: 'r1c1', parent: 'v0', round: 1, status: 'rejected', vsParent: { n: 10, meanDiff: 0, ci: [0, 0] } });
    expect(c.note).toMatch(/^added "/);
    expect(c.reason).toMatch(/Δ/);
    expect(c.scores.perSample).toHaveLength(10);
    expect(c.scores.perSample[0]).toEqual({ task: expect.any(String), id: expect.any(String), turn_idx: expect.any(Number), objective: expect.any(Number) });
    expect(c.scores.table.domains.map((d: { domain: string }) => d.domain).sort()).toEqual(['mcp', 'terminal']);
    expect(readFileSync(join(dir, 'versions', 'r1c1.jinja'), 'utf8')).toBe(c.text);
    expect(c.text).toContain('{# optimizer instructions #}');
    expect(readJson(join(dir, 'best.json'))).toMatchObject({ version: 'opt-v0', text: BUILTIN_TEMPLATES.v1.text });
    expect(JSON.stringify(readJson(join(dir, 'run.json')).options)).not.toMatch(/api-key/);
    const again = runBin(path('b'));
    expect(again.stdout).toBe(r.stdout);
    expect(readFileSync(join(path('b'), 'state.json'), 'utf8')).toBe(readFileSync(join(dir, 'state.json'), 'utf8'));
  });
});

/** The test server: model "sim" is a simulator that repeats the last observation; model "opt" answers with the scripted replies in turn. */
let server: Server;
let base: string;
let replies: string[] = [];
const seen: { model: string; messages: { role: string; content: string }[] }[] = [];
let hang: { after: number; hit: () => void } | null = null;
beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw) as { model: string; messages: { role: string; content: string }[] };
      seen.push(body);
      if (hang && seen.filter((b) => b.model === 'sim').length > hang.after) return hang.hit();
      const last = [...body.messages].reverse().find((m) => m.role === 'assistant')?.content ?? '';
      // "picky" simulates only when its system prompt holds one of the offline optimizer's instruction lines.
      const obeys = body.model !== 'picky' || /\n- [A-Z]/.test(body.messages[0]?.content ?? '');
      const content =
        body.model === 'opt'
          ? (replies.shift() ?? 'no more replies')
          : obeys
            ? `<predicted_observation>\n${last}\n</predicted_observation>`
            : 'As an AI assistant I cannot run commands.';
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { content } }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});
beforeEach(() => {
  seen.length = 0;
  replies = [];
  hang = null;
});

const sim = () => ['--backend', 'endpoint', '--base-url', base, '--model', 'sim', '--no-stream', '--concurrency', '1'];

describe('lwm optimize with an OpenAI-compatible optimizer and simulator', () => {
  it('refuses a malformed reply and one that drops a placeholder, keeps why, and goes on to score a valid one', async () => {
    const v1 = BUILTIN_TEMPLATES.v1.text;
    const better = v1.replace('Do not explain or comment.', 'Do not explain or comment. Never invent files.');
    replies = [
      'Sure! I would make the template more precise.',
      `<template>\n${v1.replace('{{ action }}', 'the action')}\n</template>\nNOTE: shorter action block`,
      `\`\`\`jinja\n${better}\n\`\`\`\nNOTE: asked not to invent files`,
      `<template>\n${v1}\n</template>\nNOTE: nothing`,
    ];
    const dir = path('ep');
    const r = await lwm(
      '--template',
      'v1',
      '--domain',
      'terminal,mcp',
      '--n',
      '6',
      '--dev',
      '4',
      '--test',
      '0',
      ...sim(),
      '--optimizer',
      'endpoint',
      '--optimizer-base-url',
      base,
      '--optimizer-model',
      'opt',
      '--rounds',
      '2',
      '--candidates',
      '2',
      '-o',
      dir,
    );
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code).toBe(0);
    const s = readJson(join(dir, 'state.json')) as LoopState;
    const byId = Object.fromEntries(s.versions.map((v) => [v.id, v]));
    expect(byId.r1c1).toMatchObject({ status: 'invalid', optimizer: 'endpoint' });
    expect(byId.r1c1.reason).toMatch(/the reply holds no template/);
    expect(byId.r1c2).toMatchObject({ status: 'invalid', note: 'shorter action block' });
    expect(byId.r1c2.reason).toMatch(/dropped placeholder\(s\) \{\{ action \}\}/);
    expect(byId.r2c1.text).toBe(better);
    expect(byId.r2c1.note).toMatch(/asked not to invent files \(repaired: the template came in a code fence/);
    expect(['accepted', 'rejected']).toContain(byId.r2c1.status);
    expect(byId.r2c1.comparison?.n).toBe(8);
    expect(byId.r2c2).toMatchObject({ status: 'invalid', reason: 'the reply is the current template unchanged' });
    expect(s.rounds.map((x) => x.round)).toEqual([1, 2]);
    // The optimizer saw the errors and the lineage, the refusals included.
    const asks = seen.filter((b) => b.model === 'opt');
    expect(asks).toHaveLength(4);
    expect(asks[2].messages[1].content).toMatch(/r1c2 \(from v0\): invalid; shorter action block — the reply dropped placeholder/);
    expect(asks[0].messages[1].content).toMatch(/Errors of the current template on the dev samples:\nMean score/);
    // The simulator was sent each template's system text exactly as renderSystem renders it.
    const systems = new Set(seen.filter((b) => b.model === 'sim').map((b) => b.messages[0]));
    expect([...systems].every((m) => m.role === 'system')).toBe(true);
    const trajectories = [...generateTrajectories('terminal', 6, 0), ...generateTrajectories('mcp', 6, 0)];
    const rendered = (text: string) =>
      new Set(trajectories.map((t) => renderSystem(candidateTemplate(text), { domain: t.domain, systemPrompt: t.system_prompt })));
    const allowed = new Set([...rendered(v1), ...rendered(better)]);
    expect([...systems].every((m) => allowed.has(m.content))).toBe(true);
    expect([...systems].filter((m) => rendered(better).has(m.content)).length).toBeGreaterThan(0);
    expect([...systems].some((m) => m.content.includes('Never invent files.'))).toBe(true);
    expect(readFileSync(join(dir, 'versions', 'r1c2.jinja'), 'utf8')).toContain('the action');
    expect(r.stdout).toMatch(/\nr1c1 +v0 +invalid +- +- +the optimizer gave no note — the reply holds no template/);
  });
});

describe('lwm optimize: a candidate that helps is accepted', () => {
  it('with a simulator that follows instructions, the offline optimizer finds one and the paired test accepts it', async () => {
    const dir = path('picky');
    const r = await lwm(
      '--template',
      'v0',
      '--domain',
      'terminal,mcp',
      '--n',
      '6',
      '--dev',
      '5',
      '--test',
      '3',
      ...sim().map((x) => (x === 'sim' ? 'picky' : x)),
      '--rounds',
      '2',
      '--candidates',
      '2',
      '-o',
      dir,
    );
    expect(r.code).toBe(0);
    const s = readJson(join(dir, 'state.json')) as LoopState;
    const best = s.versions.find((v) => v.id === s.best)!;
    expect(best.round).toBe(1);
    expect(best.status).toBe('accepted');
    expect(best.comparison!.ci![0]).toBeGreaterThan(0);
    expect(best.mean!).toBeGreaterThan(s.versions[0].mean! + 10);
    expect(s.rounds.map((x) => x.best)).toEqual([best.id, best.id]);
    expect(readJson(join(dir, 'best.json')).text).toBe(best.text);
    expect(r.stdout).toMatch(new RegExp(`\\n${best.id} +v0 +accepted +\\d+\\.\\d +\\+\\d+\\.\\d \\[\\d+\\.\\d, \\d+\\.\\d\\] +added "`));
    expect(s.test!.version).toBe(best.id);
  });
});

describe('lwm optimize --resume', () => {
  it('--rounds 1, then --rounds 2 --resume: round 1 is not redone, and the end is the 2-round run', async () => {
    const whole = await lwm('--template', 'v2', ...BASE, '--rounds', '2', '--seed', '4', '-o', path('whole'));
    expect(whole.code).toBe(0);
    expect((await lwm('--template', 'v2', ...BASE, '--rounds', '1', '--seed', '4', '-o', path('part'))).code).toBe(0);
    const first = readJson(path('part/state.json')) as LoopState;
    expect(first.stopped).toBe('done');
    const resumed = await lwm('--resume', '--rounds', '2', '-o', path('part'));
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/resuming .*part: 1 round\(s\) done, 3 version\(s\)/);
    expect(resumed.stderr).not.toMatch(/start v0 on dev|round 1\/2/);
    expect(resumed.stderr).toMatch(/round 2\/2 r2c1 on dev/);
    const end = readJson(path('part/state.json')) as LoopState;
    const w = readJson(path('whole/state.json')) as LoopState;
    expect(end.versions).toEqual(w.versions);
    expect(end.rounds).toEqual(w.rounds);
    expect(end.test).toEqual(w.test);
    expect(end.versions.slice(0, 3)).toEqual(first.versions);
    // The first part's test split was scored once more for the 2-round end.
    expect(end.calls.model).toBe(w.calls.model + 6);
    // run.json took --rounds 2: resuming again has nothing left to do, and says so.
    expect(readJson(path('part/run.json')).options.rounds).toBe('2');
    const again = await lwm('--resume', '-o', path('part'));
    expect(again.code).toBe(0);
    expect(again.stderr).not.toMatch(/ on dev: /);
    expect(readJson(path('part/state.json'))).toEqual(end);
  });

  it('resumes a run whose state.json has the older spelling (the optimizer key, the instruction markers) to the same end', async () => {
    const whole = await lwm('--template', 'v2', ...BASE, '--rounds', '2', '--seed', '4', '-o', path('whole'));
    expect(whole.code).toBe(0);
    expect((await lwm('--template', 'v2', ...BASE, '--rounds', '1', '--seed', '4', '-o', path('part'))).code).toBe(0);
    const first = readJson(path('part/state.json')) as LoopState;
    const oldText = (t: string) => t.replace(BLOCK_BEGIN, OLD_BLOCK_BEGIN).replace(BLOCK_END, OLD_BLOCK_END);
    const old = {
      ...first,
      versions: first.versions.map(({ optimizer, ...v }) => ({ ...v, text: oldText(v.text), [OLD_OPTIMIZER_KEY]: optimizer })),
    };
    expect(old.versions.some((v) => v.text.includes(OLD_BLOCK_BEGIN))).toBe(true);
    await writeFile(path('part/state.json'), JSON.stringify(old));

    const resumed = await lwm('--resume', '--rounds', '2', '-o', path('part'));
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/resuming .*part: 1 round\(s\) done, 3 version\(s\)/);
    const end = readJson(path('part/state.json')) as LoopState;
    const w = readJson(path('whole/state.json')) as LoopState;
    // Written back in the current names; the stored round-1 texts as they were, the rest as the whole run's.
    expect(JSON.stringify(end)).not.toContain(`"${OLD_OPTIMIZER_KEY}"`);
    expect(end.versions.slice(0, 3)).toEqual(first.versions.map((v) => ({ ...v, text: oldText(v.text) })));
    expect(end.versions.slice(3)).toEqual(w.versions.slice(3));
    expect(end.rounds).toEqual(w.rounds);
    expect(end.test).toEqual(w.test);
    const lineage = readJson(path('part/lineage.json')) as { format: string; version: number; versions: { id: string; optimizer: string }[] };
    expect(lineage).toMatchObject({ format: 'lwm-optimize-lineage', version: 2 });
    expect(lineage.versions.map((v) => v.optimizer)).toEqual(w.versions.map((v) => v.optimizer));
  });

  it('a run killed in the middle of a round resumes to the same end as a run that was not', async () => {
    const bin = fileURLToPath(new URL('../../../bin/lwm.mjs', import.meta.url));
    const argv = [
      'optimize',
      '--template',
      'v0',
      '--domain',
      'terminal,mcp',
      '--n',
      '6',
      '--dev',
      '4',
      '--test',
      '2',
      ...sim(),
      '--rounds',
      '2',
      '--candidates',
      '2',
      '--seed',
      '1',
    ];
    expect((await lwm(...argv.slice(1), '-o', path('whole'))).code).toBe(0);
    const wholeCalls = seen.filter((b) => b.model === 'sim').length;
    seen.length = 0;
    // The simulator stops answering during round 1's second candidate; the process is then killed.
    const child = spawn(process.execPath, [bin, ...argv, '-o', path('cut')], { stdio: 'ignore' });
    await new Promise<void>((resolve) => (hang = { after: 8 + 8 + 3, hit: () => resolve() }));
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    hang = null;
    const cut = readJson(path('cut/state.json')) as LoopState;
    expect(cut.round).toBe(0);
    expect(cut.pending).toEqual(['r1c2']);
    seen.length = 0;
    const resumed = await lwm('--resume', '-o', path('cut'));
    expect(resumed.code).toBe(0);
    // v0 and r1c1 (8 samples each) were not simulated again.
    expect(seen.filter((b) => b.model === 'sim')).toHaveLength(wholeCalls - 16);
    const end = readJson(path('cut/state.json')) as LoopState;
    expect(end).toEqual(readJson(path('whole/state.json')));
  });
});
