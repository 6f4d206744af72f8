// `lwm agent train` settings that are checked before the GPU starts.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileError, UsageError } from '../io.ts';
import { captureIO, microCheckpoint } from '../testing.ts';
import agent, { agentTrainSpec, openWorld, readState, worldRef, writeState } from './agentTrain.ts';
import exportCommand from './export.ts';
import { parseServeArgs, serveRef } from './serve.ts';
import { nodeSource } from '../../backends/node.ts';
import { openBackend } from '../../backends/open.ts';
import { generateTrajectories } from '../../envs/generate.ts';
import { listen, OpenAIService } from '../../serve/openai.ts';
import { newAgentExperiment } from '../../train/agent/experiment.ts';
import { AGENT_DEFAULTS } from '../../train/agent/run.ts';

const run = (...a: string[]) => agent(a, captureIO());
const base = ['train', '--env', 'real', '--domain', 'terminal', '--families', 'write_word'];

describe('lwm agent train settings', () => {
  it('says what is wrong with each setting, before any training', async () => {
    await expect(run('play')).rejects.toThrow(/unknown subcommand 'play'/);
    await expect(run('train', '--env', 'dream', '--domain', 'terminal', '--families', 'write_word', '-o', 'x')).rejects.toThrow(/--env must be real or model/);
    await expect(run('train', '--domain', 'terminal', '--families', 'write_word', '--world', 'w', '-o', 'x')).rejects.toThrow(/--world goes with --env model/);
    await expect(run('train', '--env', 'model', '--domain', 'terminal', '--families', 'write_word', '-o', 'x')).rejects.toThrow(/--env model needs --world M/);
    await expect(run('train', '--families', 'write_word', '-o', 'x')).rejects.toThrow(/--domain is required/);
    await expect(run('train', '--domain', 'moon', '--families', 'write_word', '-o', 'x')).rejects.toThrow(/--domain must be one of/);
    await expect(run('train', '--domain', 'terminal', '-o', 'x')).rejects.toThrow(/--families is required/);
    await expect(run('train', '--domain', 'terminal', '--families', 'write_word,', '-o', 'x')).rejects.toThrow(/--families has an empty name/);
    await expect(run('train', '--domain', 'terminal', '--families', 'fly_kite', '-o', 'x')).rejects.toThrow(
      /no task family 'fly_kite' in terminal; families: write_word, make_dir/,
    );
    await expect(run(...base)).rejects.toThrow(/-o OUT is required/);
    await expect(run(...base, '-o', 'x', '--group', '1')).rejects.toThrow(/--group must be an integer from 2/);
    await expect(run(...base, '-o', 'x', '--sft-steps', 'many')).rejects.toThrow(UsageError);
    await expect(run(...base, '-o', 'x', '--temperature', '0')).rejects.toThrow(/--temperature must be a number above 0/);
    await expect(run(...base, '-o', 'x', '--rl-lr', 'fast')).rejects.toThrow(/--rl-lr must be a number/);
    await expect(run(...base, '-o', 'x', '--rl-warmup', '1.5')).rejects.toThrow(/--rl-warmup must be an integer from 0/);
    await expect(run(...base, '-o', 'x', '--layout', 'wide')).rejects.toThrow(/--layout must be one of full, compact, got 'wide'/);
    await expect(run(...base, '-o', 'x', '--policy', '/nonexistent/policy.safetensors')).rejects.toThrow(FileError);
    await expect(run(...base, '-o', 'x', '--lora', '4')).rejects.toThrow(/--lora needs --policy HF_FOLDER/);
    await expect(run(...base, '-o', 'x', '--memory-gib', '2')).rejects.toThrow(/--memory-gib goes with --policy HF_FOLDER/);
    const adapter = mkdtempSync(join(tmpdir(), 'lwm-adapter-'));
    writeFileSync(join(adapter, 'adapter_config.json'), '{"r": 2}');
    await expect(run(...base, '-o', 'x', '--policy', adapter, '--lora', '4')).rejects.toThrow(/is an adapter folder, which goes on with its own settings/);
    await expect(run(...base, '-o', 'x', '--policy', adapter, '--lora', '0')).rejects.toThrow(/--lora must be a rank from 1/);
    await expect(run(...base, '-o', 'x', '--policy', adapter, '--memory-gib', 'lots')).rejects.toThrow(/--memory-gib must be a number above 0/);
    const dir = mkdtempSync(join(tmpdir(), 'lwm-agent-'));
    const file = join(dir, 'taken');
    writeFileSync(file, 'x');
    await expect(run(...base, '-o', file)).rejects.toThrow(/is a file; -o names the folder/);
  });
  it('explains itself', async () => {
    const io = captureIO();
    expect(await agent(['train', '--help'], io)).toBe(0);
    expect(io.stdout).toContain('--env real');
    expect(io.stdout).toContain('--rl-steps N');
    expect(await agent([], captureIO())).toBe(2);
  });

  it('defaults its budgets and imitation steps to what the families need; a flag overrides each', async () => {
    const spec = (...a: string[]) => agentTrainSpec(['--domain', 'mcp', '-o', 'x', ...a], captureIO());
    expect(await spec('--families', 'write_file')).toMatchObject({ maxNewTokens: 42, T: 96, sftSteps: 2000 });
    expect(await spec('--families', 'add_event')).toMatchObject({ maxNewTokens: 51, T: 128, sftSteps: 400 });
    expect(await spec('--families', 'write_file', '--sft-steps', '300', '--tokens', '160')).toMatchObject({ maxNewTokens: 42, T: 160, sftSteps: 300 });
    expect(await agentTrainSpec([...base.slice(3), '-o', 'x'], captureIO())).toMatchObject({ maxNewTokens: 12, T: 64, sftSteps: 400 });
  });

  it('checks the experiment settings and a stored experiment before any training', async () => {
    const exp = ['experiment', '--domain', 'terminal', '--families', 'write_word'];
    await expect(run('fly')).rejects.toThrow(/try: lwm agent train, lwm agent experiment/);
    await expect(run(...exp, '--arms', 'real,moon', '-o', 'x')).rejects.toThrow(
      /--arms: unknown arm 'moon'; arms: imitation, real, shuffled, model, model-real/,
    );
    await expect(run(...exp, '-o', 'x')).rejects.toThrow(/--world M is required for the model arms/);
    await expect(run(...exp, '--arms', 'real,model-real', '--world', 'copy-last', '-o', 'x')).rejects.toThrow(/'model-real' goes on from the 'model' arm/);
    await expect(run(...exp, '--arms', 'real', '--env', 'real', '-o', 'x')).rejects.toThrow(/--env goes with lwm agent train/);
    await expect(run(...exp, '--arms', 'real', '--rl-steps', '0', '-o', 'x')).rejects.toThrow(/RL arms need rlSteps ≥ 1/);
    await expect(run(...base, '-o', 'x', '--resume')).rejects.toThrow(/--arms and --resume go with lwm agent experiment/);
    const ckpt = join(mkdtempSync(join(tmpdir(), 'lwm-policy-')), 'policy.safetensors');
    writeFileSync(ckpt, 'bytes');
    await expect(run(...exp, '--arms', 'real', '--policy', ckpt, '-o', 'x')).rejects.toThrow(
      /an experiment trains its policy from a preset .* or a Hugging Face folder/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'lwm-exp-'));
    await expect(run(...exp, '--arms', 'real', '--resume', '-o', dir)).rejects.toThrow(/experiment.json: cannot read the experiment to resume/);
    writeFileSync(join(dir, 'experiment.json'), '{"version": 1, "arms": [], "spec": {}, "imitation": "../../etc/passwd.safetensors"}');
    await expect(run(...exp, '--arms', 'real', '--resume', '-o', dir)).rejects.toThrow(
      /names a policy file "..\/..\/etc\/passwd.safetensors" outside its folder/,
    );
    writeFileSync(join(dir, 'experiment.json'), '[1, 2');
    await expect(run(...exp, '--arms', 'real', '--resume', '-o', dir)).rejects.toThrow(FileError);
    writeFileSync(join(dir, 'experiment.json'), '{"version": 7}');
    await expect(run(...exp, '--arms', 'real', '--resume', '-o', dir)).rejects.toThrow(/not an experiment saved by lwm agent experiment/);
    await expect(run(...exp, '--arms', 'real', '--rl-steps', '2', '-o', dir)).rejects.toThrow(/an experiment is already there; go on with --resume/);
    const io = captureIO();
    expect(await agent(['experiment', '--help'], io)).toBe(0);
    expect(io.stdout).toContain('lwm agent experiment --world M');
  });

  it('stores an experiment as JSON beside its policies and reads back the same state, the newest cursor only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lwm-exp-state-'));
    const s = newAgentExperiment({ train: { ...AGENT_DEFAULTS, domain: 'terminal', families: ['write_word'] }, arms: ['imitation', 'real'] });
    s.untrained = { phase: 'untrained', step: 0, success: 0, successes: 0, n: 32, format: 0, turns: 0 };
    s.imitation = Uint8Array.from([1, 2, 3]);
    s.cursor = { arm: 1, step: 5, checkpoint: Uint8Array.from([4, 5]) };
    const written = new Set<string>();
    writeState(dir, s, written);
    expect(readState(dir)).toEqual(s);
    const next = { ...s, cursor: { arm: 1, step: 10, checkpoint: Uint8Array.from([6]) } };
    writeState(dir, next, written);
    expect(readState(dir)).toEqual(next);
    expect(readdirSync(dir).sort()).toEqual(['cursor-1-10.safetensors', 'experiment.json', 'imitation.safetensors']);
    // The imitation policy, set once, is not written again at the next save.
    writeFileSync(join(dir, 'imitation.safetensors'), Uint8Array.from([9]));
    writeState(dir, next, written);
    expect([...readFileSync(join(dir, 'imitation.safetensors'))]).toEqual([9]);
  });
});

describe('lwm agent probe settings', () => {
  it('needs a world model checkpoint, a domain and families with a probe, checked before the GPU starts', async () => {
    const base = ['probe', '--domain', 'terminal', '--families', 'write_word'];
    await expect(run('probe', '--domain', 'terminal', '--families', 'write_word')).rejects.toThrow(/--world M is required/);
    await expect(run(...base, '--world', 'copy-last')).rejects.toThrow(/--world M is required/);
    await expect(run('probe', '--world', 'w.safetensors', '--families', 'write_word')).rejects.toThrow(/--domain must be one of/);
    await expect(run('probe', '--world', 'w.safetensors', '--domain', 'terminal')).rejects.toThrow(/--families is required/);
    await expect(run('probe', '--world', 'w.safetensors', '--domain', 'terminal', '--families', 'record_env')).rejects.toThrow(
      /'terminal\/record_env' has no probe; families with one: terminal\/write_word/,
    );
    await expect(run(...base, '--world', 'w.safetensors', '--eval-tasks', '0')).rejects.toThrow(UsageError);
    const help = captureIO();
    expect(await agent(['--help'], help)).toBe(0);
    expect(help.stdout).toContain('lwm agent probe --world M');
  });
});

/** An OpenAI-compatible server on 127.0.0.1 that lists `models` and records the paths asked for. */
async function modelList(models: string[], status = 200) {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(status === 200 ? { object: 'list', data: models.map((id) => ({ id, object: 'model' })) } : { error: { message: 'nope' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, paths, close: () => new Promise((r) => server.close(r)) };
}

describe('--world', () => {
  it('names copy-last, a checkpoint, an ONNX export, a Hugging Face folder; anything else is an error that names it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lwm-world-ref-'));
    mkdirSync(join(dir, 'export', 'onnx'), { recursive: true });
    mkdirSync(join(dir, 'hf'));
    writeFileSync(join(dir, 'hf', 'model.safetensors'), '');
    mkdirSync(join(dir, 'plain'));
    writeFileSync(join(dir, 'ckpt.safetensors'), '');
    expect(await worldRef('copy-last')).toEqual({ kind: 'copy-last' });
    expect(await worldRef(join(dir, 'export'))).toEqual({ kind: 'onnx', onnx: { folderId: join(dir, 'export'), name: 'export', execution: 'wasm' } });
    expect(await worldRef(join(dir, 'ckpt.safetensors'))).toEqual({
      kind: 'checkpoint',
      checkpoint: { key: join(dir, 'ckpt.safetensors'), label: 'ckpt.safetensors' },
    });
    expect(await worldRef(join(dir, 'hf'))).toMatchObject({ kind: 'hf', hf: { folderId: join(dir, 'hf'), name: 'hf' } });
    await expect(worldRef(join(dir, 'w.safetensors'))).rejects.toThrow(/w\.safetensors: no such file or folder/);
    await expect(worldRef(join(dir, 'plain'))).rejects.toThrow(/plain: a folder without \*\.safetensors or onnx\/\*\.onnx is not a model folder/);
    await expect(worldRef(join(dir, 'ckpt.safetensors'), { model: 'm' })).rejects.toThrow(/--world-model goes with an endpoint --world URL/);
    // openWorld says why a world cannot be opened, and the command ends with 1.
    const io = captureIO();
    expect(await openWorld(io, join(dir, 'plain'))).toBeNull();
    expect(io.stderr).toMatch(/lwm agent train: --world .*plain: a folder without/);
  });

  it('names an endpoint by its base URL: the model --world-model names, or the only one it lists', async () => {
    const one = await modelList(['served-world']);
    const two = await modelList(['a', 'b']);
    const none = await modelList([]);
    const refused = await modelList([], 401);
    const saved = process.env.LWM_API_KEY;
    process.env.LWM_API_KEY = 'k-test';
    try {
      const endpoint = (model: string, baseUrl: string) => ({ kind: 'endpoint', endpoint: { baseUrl, model, stream: false, concurrency: 8 } });
      expect(await worldRef(one.url)).toEqual(endpoint('served-world', one.url));
      // The listing carries the key, as the completions will.
      expect(one.paths).toEqual(['GET /v1/models Bearer k-test']);
      expect(await worldRef(two.url, { model: 'b' })).toEqual(endpoint('b', two.url));
      expect(two.paths).toEqual([]);
      await expect(worldRef(two.url)).rejects.toThrow(/serves 2 models \(a, b\); name the world model with --world-model NAME/);
      await expect(worldRef(none.url)).rejects.toThrow(/serves no model/);
      await expect(worldRef(refused.url)).rejects.toThrow(/refused the API key \(HTTP 401: nope\)/);
      await expect(worldRef('http://user:pw@127.0.0.1:1/v1')).rejects.toThrow(/must not hold a user name or password/);
      await expect(worldRef('http://127.0.0.1:1/v1')).rejects.toThrow(/cannot reach http:\/\/127\.0\.0\.1:1\/v1\/models/);
      // --world-model goes with an endpoint world.
      await expect(run('train', '--env', 'real', '--domain', 'terminal', '--families', 'write_word', '--world-model', 'm', '-o', 'x')).rejects.toThrow(
        /--world-model goes with an endpoint --world URL/,
      );
      await expect(run('probe', '--world', two.url, '--domain', 'terminal', '--families', 'write_word')).rejects.toThrow(/serves 2 models/);
      // Named, the model is not listed first: the refused key is met at the first turn, and said in one line (exit 1).
      const io = captureIO();
      const code = await agent(
        ['probe', '--world', refused.url, '--world-model', 'm', '--domain', 'terminal', '--families', 'write_word', '--eval-tasks', '1'],
        io,
      );
      expect(code).toBe(1);
      expect(io.stderr).toMatch(
        /^lwm agent probe: --world http:\/\/127\.0\.0\.1:\d+\/v1: the endpoint .* refused the API key \(HTTP 401: nope\).*\(lwm agent sends \$LWM_API_KEY, else \$OPENAI_API_KEY\)\n$/,
      );
      // A resumed experiment keeps the endpoint model it began with.
      const dir = mkdtempSync(join(tmpdir(), 'lwm-exp-world-'));
      const state = newAgentExperiment({
        train: { ...AGENT_DEFAULTS, domain: 'terminal', families: ['write_word'] },
        arms: ['model'],
        world: two.url,
        worldModel: 'a',
      });
      writeState(dir, state, new Set());
      const exp = ['experiment', '--domain', 'terminal', '--families', 'write_word', '--world', two.url, '--resume', '-o', dir];
      await expect(run(...exp, '--world-model', 'b')).rejects.toThrow(
        /--world-model b: this experiment's world model is a; a resumed experiment keeps its world/,
      );
    } finally {
      if (saved === undefined) delete process.env.LWM_API_KEY;
      else process.env.LWM_API_KEY = saved;
      await Promise.all([one, two, none, refused].map((s) => s.close()));
    }
  });

  it('a world model behind lwm serve answers the probe as the model itself does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lwm-world-served-'));
    const ckpt = join(dir, 'world.safetensors');
    writeFileSync(ckpt, microCheckpoint(generateTrajectories('terminal', 2, 5), { template: 'compact', scale: 8 }));
    const onnxDir = join(dir, 'world-onnx');
    const exported = captureIO();
    expect(await exportCommand([ckpt, '--to', 'onnx', '-o', onnxDir], exported), exported.stderr).toBe(0);
    const probe = async (...world: string[]) => {
      const io = captureIO();
      const code = await agent(
        ['probe', '--world', ...world, '--domain', 'terminal', '--families', 'write_word', '--eval-tasks', '2', '--world-max-tokens', '6'],
        io,
      );
      expect(code, io.stderr).toBe(0);
      return JSON.parse(io.stdout);
    };
    const direct = await probe(onnxDir);
    // This random model (its weights scaled up) says something in each example, so equal answers are a check.
    const said = direct.attempts.flatMap((r: { example?: { observation: string } }) => (r.example ? [r.example.observation] : []));
    expect(said.length).toBeGreaterThan(0);
    for (const o of said) expect(o.trim()).not.toBe('');
    // What `lwm serve --model DIR --domain terminal` serves, in this process.
    const args = parseServeArgs(['--model', onnxDir, '--domain', 'terminal'], {});
    if (args === 'help') throw new Error('help');
    const source = nodeSource();
    const opened = await openBackend(serveRef(args), source);
    const { server, url } = await listen(new OpenAIService(opened, { modelId: 'world', domain: 'terminal' }), '127.0.0.1', 0);
    try {
      const served = await probe(`${url}/v1`);
      expect(served.world).toBe(`${url}/v1`);
      // The turn goes out in the AgentWorldBench layout and the server lays it out again: the same prompt, the same greedy answers.
      expect(served.attempts).toEqual(direct.attempts);
      expect((await probe(`${url}/v1`, '--world-model', 'world')).attempts).toEqual(direct.attempts);
    } finally {
      await new Promise((r) => server.close(r));
      opened.dispose();
      source.release();
    }
  });
});
