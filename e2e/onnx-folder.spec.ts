// An ONNX folder in a browser without WebGPU (navigator.gpu removed from the page): the tiny chat
// Llama (src/model/fixtures/hf/llama-chat) exported with `lwm export --to onnx` at the start of the
// run, picked in the Playground, read before anything is opened (config.json's shape, its model
// files, a choice between them), opened by onnxruntime-web on its WASM execution provider (the page
// says so), and a turn streamed through its chat template whose text is our reference engine's
// greedy text for the same turn (e2e/onnx-expected.mjs). onnxruntime-web and its .wasm load only
// then, from the site itself (dist/assets), never from elsewhere. With WebGPU, the same turn runs
// on onnxruntime-web's WebGPU execution provider with the same text. Also: the folder as a Bench
// backend beside copy-last, judged and scored; and the errors (no onnx/model*.onnx; a model file
// that is not an ONNX model), which name the file.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { collectPageErrors, docScreenshotPath, forbidForeignRequests, snap } from './helpers.ts';

let tmp = '';
/** The export, with two more model files to choose from: the 4-bit model_q4.onnx of scripts/fixtures/onnx_variants.py, and a model_fp16.onnx that is not an ONNX model. */
let ONNX = '';

test.beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'lwm-onnx-e2e-'));
  ONNX = join(tmp, 'TinyOnnx');
  execFileSync(process.execPath, ['bin/lwm.mjs', 'export', 'src/model/fixtures/hf/llama-chat', '--to', 'onnx', '-o', ONNX]);
  writeFileSync(join(ONNX, 'onnx', 'model_fp16.onnx'), 'not an ONNX model');
  cpSync('src/model/onnx/fixtures/llama-chat-variants/model_q4.onnx', join(ONNX, 'onnx', 'model_q4.onnx'));
});
test.afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function withoutWebGpu(page: Page) {
  await page.addInitScript(() => {
    delete (Navigator.prototype as unknown as { gpu?: unknown }).gpu;
  });
}

/** Requests for onnxruntime-web's module and binary (the worker's requests included). */
function ortRequests(page: Page): string[] {
  const urls: string[] = [];
  page.on('request', (r) => {
    if (/\/ort[.-][^/]*\.(js|mjs|wasm)$/.test(new URL(r.url()).pathname)) urls.push(r.url());
  });
  return urls;
}

test("the built site carries onnxruntime-web's wasm", () => {
  const wasm = readdirSync('dist/assets').filter((f) => /^ort-wasm-simd-threaded\.jsep-[\w-]+\.wasm$/.test(f));
  expect(wasm).toHaveLength(1);
  expect(statSync(join('dist/assets', wasm[0])).size).toBeGreaterThan(1_000_000);
});

test("without WebGPU: an ONNX folder picked, read, opened on WASM, and a turn with our engine's greedy text", async ({ page }) => {
  test.setTimeout(300_000);
  await withoutWebGpu(page);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  const ort = ortRequests(page);
  await page.goto('./#/playground');
  await expect(page.getByRole('heading', { name: 'Playground', level: 1 })).toBeVisible();
  await expect(page.getByTestId('pg-onnx')).toContainText('onnxruntime-web runs it on WASM (this browser has no WebGPU)');
  await page.getByLabel('Open an ONNX model folder').setInputFiles(ONNX);
  const info = page.getByTestId('onnx-folder-info');
  await expect(info).toContainText(
    /^TinyOnnx: ONNX, LlamaForCausalLM \(2 layers × 32, 4 heads \/ 2 KV heads, vocabulary 1461\), context 128; model\.onnx [\d.]+ KiB, model_fp16\.onnx [\d.]+ KiB, model_q4\.onnx [\d.]+ KiB · tokenizer and chat template$/,
    { timeout: 120_000 },
  );
  const variant = page.getByLabel('Model file');
  await expect(variant).toHaveValue('onnx/model.onnx');
  await expect(variant.locator('option')).toHaveText(['model.onnx (fp32)', 'model_fp16.onnx (fp16)', 'model_q4.onnx (q4)']);
  // Nothing of onnxruntime-web is fetched until a model is opened.
  expect(ort).toEqual([]);
  await page.getByRole('button', { name: 'Load in the Playground' }).click();
  await expect(page.getByLabel('Backend')).toHaveValue(/^onnx:TinyOnnx#/);
  await expect(page.getByTestId('pg-model')).toContainText(
    'Loaded in onnxruntime-web on WASM (CPU): onnx:TinyOnnx · onnx/model.onnx · LlamaForCausalLM · 2 layers · context 128 tokens · prompted with its chat template · stops at token 1, 4',
    { timeout: 120_000 },
  );
  // Then its module and its binary, from the site's own assets.
  expect(ort.map((u) => new URL(u).pathname).sort()).toEqual([
    expect.stringMatching(/^\/studio\/assets\/ort-wasm-simd-threaded\.jsep-[\w-]+\.wasm$/),
    expect.stringMatching(/^\/studio\/assets\/ort\.bundle\.min-[\w-]+\.js$/),
  ]);

  await page.getByLabel('Max tokens').fill('12');
  await page.getByLabel('Action 1').fill('ls -la');
  await page.getByRole('button', { name: 'Send' }).click();
  const t1 = page.getByTestId('turn-1');
  await expect(t1.getByTestId('turn-meta')).toContainText(/onnx:TinyOnnx · teacher forcing · 12 tokens · [\d.]+ tokens\/s/, { timeout: 120_000 });
  await expect(page.getByTestId('context-cut')).toContainText(/116 fit \(context 128 − 12 max tokens\)/);
  const session = await page.evaluate(() => JSON.parse(localStorage.getItem('lwm.playground') ?? '{}').state.session);
  writeFileSync(join(tmp, 'session.json'), JSON.stringify(session));
  const expected = JSON.parse(execFileSync(process.execPath, ['e2e/onnx-expected.mjs', join(tmp, 'session.json'), '0', '12'], { encoding: 'utf8' })) as {
    ids: number[];
    text: string;
  };
  // 'ls -la' makes this random model say something varied (multi-byte characters included), not a run of one token.
  expect(new Set(expected.ids).size).toBeGreaterThan(8);
  expect(session.turns[0].prediction.raw).toBe(expected.text);
  // WASM: the same 12 passes' cache in CPU memory, all freed after the turn.
  await expect(page.getByTestId('pg-model')).toContainText('KV cache outputs so far: 0 kept on the GPU, 48 on the CPU, 0 alive');
  console.log(`[e2e] ONNX on WASM, turn 1: ${JSON.stringify(expected.text)} (ids ${expected.ids.join(' ')})`);
  await page.getByRole('heading', { name: 'Playground', level: 1 }).scrollIntoViewIfNeeded();
  // docs/app.md's picture: the page down to the model's status under the ONNX folder's card.
  const status = (await page.getByTestId('pg-model').boundingBox())!;
  await page.screenshot({
    path: docScreenshotPath('playground-onnx'),
    fullPage: true,
    clip: { x: 0, y: 0, width: 1280, height: Math.max(800, Math.ceil(status.y + status.height + 24)) },
  });
  await snap(page, 'playground-onnx');

  // Another model file of the folder: the 4-bit one opens at once, and the next turn runs on it.
  await variant.selectOption('onnx/model_q4.onnx');
  await expect(page.getByTestId('pg-model')).toContainText('Loaded in onnxruntime-web on WASM (CPU): onnx:TinyOnnx · onnx/model_q4.onnx', { timeout: 120_000 });
  await page.getByLabel('Action 2').fill('pwd');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByTestId('turn-2').getByTestId('turn-meta')).toContainText(/onnx:TinyOnnx · teacher forcing · \d+ tokens?/, { timeout: 120_000 });
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});

test("with WebGPU: the same folder on onnxruntime-web's WebGPU execution provider gives the same greedy text", async ({ page }) => {
  test.setTimeout(300_000);
  const errors = collectPageErrors(page);
  await page.goto('./#/playground');
  await expect(page.getByTestId('pg-onnx')).toContainText('onnxruntime-web runs it on WebGPU, or WASM where WebGPU cannot take it');
  await page.getByLabel('Open an ONNX model folder').setInputFiles(ONNX);
  await expect(page.getByTestId('onnx-folder-info')).toContainText('TinyOnnx: ONNX', { timeout: 120_000 });
  await page.getByRole('button', { name: 'Load in the Playground' }).click();
  await expect(page.getByTestId('pg-model')).toContainText('Loaded in onnxruntime-web on WebGPU: onnx:TinyOnnx · onnx/model.onnx', { timeout: 120_000 });
  await page.getByLabel('Max tokens').fill('12');
  await page.getByLabel('Action 1').fill('ls -la');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByTestId('turn-1').getByTestId('turn-meta')).toContainText(/onnx:TinyOnnx · teacher forcing · 12 tokens/, { timeout: 120_000 });
  const session = await page.evaluate(() => JSON.parse(localStorage.getItem('lwm.playground') ?? '{}').state.session);
  writeFileSync(join(tmp, 'session-webgpu.json'), JSON.stringify(session));
  const expected = JSON.parse(execFileSync(process.execPath, ['e2e/onnx-expected.mjs', join(tmp, 'session-webgpu.json'), '0', '12'], { encoding: 'utf8' })) as {
    text: string;
  };
  expect(session.turns[0].prediction.raw).toBe(expected.text);
  // The KV cache never came back to the CPU: 12 passes (the prompt, then each new token but the
  // last) × 2 layers × key and value stayed in GPU buffers, all freed after the turn.
  await expect(page.getByTestId('pg-model')).toContainText('KV cache outputs so far: 48 kept on the GPU, 0 on the CPU, 0 alive');
  expect(errors).toEqual([]);
});

test('errors name the file: a folder without onnx/model*.onnx, a model file that is not an ONNX model', async ({ page }) => {
  await withoutWebGpu(page);
  const errors = collectPageErrors(page);
  await page.goto('./#/playground');
  const noModel = join(tmp, 'NoModel');
  cpSync(ONNX, noModel, { recursive: true, filter: (src) => !/\.onnx$/.test(src) });
  await page.getByLabel('Open an ONNX model folder').setInputFiles(noModel);
  await expect(page.getByTestId('onnx-folder-error')).toHaveText(
    /^NoModel: has no ONNX model \(onnx\/\*\.onnx\); an ONNX causal-LM folder keeps its model at onnx\/model\.onnx/,
    { timeout: 120_000 },
  );
  await expect(page.getByRole('button', { name: 'Load in the Playground' })).toBeDisabled();

  await page.getByLabel('Open an ONNX model folder').setInputFiles(ONNX);
  await expect(page.getByTestId('onnx-folder-info')).toContainText('TinyOnnx: ONNX', { timeout: 120_000 });
  await page.getByLabel('Model file').selectOption('onnx/model_fp16.onnx');
  await page.getByTestId('onnx-folder').filter({ hasText: 'TinyOnnx' }).getByRole('button', { name: 'Load in the Playground' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'model_fp16' })).toContainText('TinyOnnx/onnx/model_fp16.onnx: onnxruntime-web cannot load it', {
    timeout: 120_000,
  });
  await expect(page.getByTestId('pg-model')).toHaveText('Not loaded: see the message above.');
  await snap(page, 'playground-onnx-errors');
  expect(errors).toEqual([]);
});

test('Bench without WebGPU: the ONNX folder beside copy-last on one held-out turn, judged and scored', async ({ page }) => {
  test.setTimeout(300_000);
  await withoutWebGpu(page);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await page.goto('./#/bench');
  await expect(page.getByLabel('Dataset', { exact: true })).toContainText('Default dataset', { timeout: 120_000 });
  for (const box of await page.getByRole('group', { name: 'Domains' }).getByRole('checkbox').all()) {
    if (((await box.locator('xpath=..').textContent()) ?? '').trim() !== 'terminal') await box.uncheck();
  }
  await page.getByLabel('Samples per domain').fill('1');
  await page
    .getByRole('group', { name: 'Backends' })
    .getByRole('checkbox', { name: /^reference/ })
    .uncheck();
  await page.getByLabel('Open an ONNX model folder').setInputFiles(ONNX);
  await expect(page.getByTestId('onnx-folder-info')).toContainText('TinyOnnx: ONNX, LlamaForCausalLM', { timeout: 120_000 });
  await page.getByRole('button', { name: 'Add to the benchmark' }).last().click();
  await expect(page.getByTestId('bench-onnx').getByRole('button', { name: 'Add to the benchmark ✓' })).toHaveAttribute('aria-pressed', 'true');
  await page.getByLabel('Max new tokens').fill('4');
  await page.getByRole('button', { name: 'Run benchmark' }).click();
  await expect(page.getByTestId('bench-form-errors')).toHaveCount(0);
  await expect(page.getByTestId('bench-progress')).toHaveCount(0, { timeout: 240_000 });
  const overall = page.getByTestId('bench-table').locator('tbody[data-domain="overall"] tr');
  await expect(overall).toHaveCount(2, { timeout: 60_000 });
  expect(await overall.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-backend')))).toEqual(['onnx:TinyOnnx', 'copy-last']);
  await snap(page, 'bench-onnx');
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});
