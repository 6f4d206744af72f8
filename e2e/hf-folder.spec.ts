// A Hugging Face model folder in the Playground, as a user meets it: pick the folder of the tiny
// chat Llama (src/model/fixtures/hf/llama-chat: config.json, model.safetensors, tokenizer.json with
// a chat template), read its architecture, size and memory estimate before anything is loaded,
// load it, type an action and watch the observation stream in; switch views and come back to the
// same folder. Then the errors: a budget it does not fit (refused, with what would fit), and a
// folder without config.json (the message names the file) while the session is kept. Also: the
// folder as a Bench backend beside copy-last, and its files dropped on the Playground instead of
// picked.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { CHAT_LLAMA, chatLlamaCopy, collectPageErrors, forbidForeignRequests, snap } from './helpers.ts';

async function openPlayground(page: Page) {
  await page.goto('./#/playground');
  await expect(page.getByRole('heading', { name: 'Playground', level: 1 })).toBeVisible();
}

test('a Hugging Face folder: estimate before loading, load, an action streamed through its chat template, kept across views', async ({ page }) => {
  test.setTimeout(600_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await openPlayground(page);
  await expect(page.getByText('pick the folder again after a reload').first()).toBeVisible();
  await page.getByLabel('Open a Hugging Face model folder').setInputFiles(chatLlamaCopy('TinyChat', ['generate.json']));
  // What the worker read from config.json and the safetensors headers, before any weight is loaded.
  const info = page.getByTestId('hf-folder-info');
  await expect(info).toContainText(
    /^TinyChat: LlamaForCausalLM, [\d.]+K parameters \(2 layers × 32, 4 heads \/ 2 KV heads, vocabulary 1461\), context 128 of 128; needs [\d.]+ (KiB|MiB) of the 4\.00 GiB budget/,
    { timeout: 120_000 },
  );
  await expect(info).toContainText('tokenizer and chat template');
  await expect(page.getByTestId('pg-model')).toHaveCount(0);
  await page.getByRole('button', { name: 'Load in the Playground' }).click();
  await expect(page.getByLabel('Backend')).toHaveValue(/^hf:TinyChat#/);
  await expect(page.getByTestId('pg-model')).toContainText(
    /Loaded on the GPU: hf:TinyChat · LlamaForCausalLM · 2 layers × 32 · context 128 tokens · vocabulary 1461 · prompted with its chat template · stops at token 1, 4/,
    { timeout: 120_000 },
  );
  await page.getByLabel('Max tokens').fill('12');
  await page.getByLabel('Action 1').fill('ls');
  await page.getByRole('button', { name: 'Send' }).click();
  let sawStream = false;
  await expect
    .poll(
      async () => {
        if (await page.getByTestId('live-rate').isVisible()) sawStream = true;
        return sawStream || (await page.getByTestId('turn-1').getByLabel('Predicted observation').isVisible());
      },
      { timeout: 240_000, intervals: [50] },
    )
    .toBe(true);
  console.log(`[e2e] live stream seen: ${sawStream}`);
  const t1 = page.getByTestId('turn-1');
  await expect(t1.getByLabel('Predicted observation')).toBeVisible({ timeout: 240_000 });
  await expect(t1.getByTestId('turn-meta')).toContainText(/hf:TinyChat · teacher forcing · \d+ tokens? · [\d.]+ tokens\/s/);
  // The terminal's system prompt is far longer than 128 tokens: the context bar says it was shortened to fit.
  await expect(page.getByTestId('context-bar')).toContainText('context 128');
  await expect(page.getByTestId('context-cut')).toContainText(/116 fit \(context 128 − 12 max tokens\)/);
  await page.getByRole('heading', { name: 'Playground', level: 1 }).scrollIntoViewIfNeeded();
  await snap(page, 'playground-hf');

  // Another view and back: the folder and the choice are still there, loaded again.
  await page.getByRole('link', { name: 'Data' }).click();
  await expect(page.getByRole('heading', { level: 1 })).not.toHaveText('Playground');
  await page.getByRole('link', { name: 'Playground' }).click();
  await expect(page.getByTestId('hf-folder-info')).toContainText('TinyChat: LlamaForCausalLM');
  await expect(page.getByLabel('Backend')).toHaveValue(/^hf:TinyChat#/);
  await expect(page.getByTestId('pg-model')).toContainText('Loaded on the GPU: hf:TinyChat', { timeout: 120_000 });
  await page.getByLabel('Action 2').fill('pwd');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByTestId('turn-2').getByTestId('turn-meta')).toContainText(/hf:TinyChat · teacher forcing/, { timeout: 240_000 });
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});

test('errors: a budget the folder does not fit is refused with what would fit; a folder without config.json is named; the session is kept', async ({
  page,
}) => {
  const errors = collectPageErrors(page);
  await openPlayground(page);
  await page.getByLabel('Backend').selectOption('copy-last');
  await page.getByLabel('Action 1').fill('ls');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByTestId('turn-1').getByLabel('Predicted observation')).toBeVisible({ timeout: 60_000 });

  await page.getByLabel('Open a Hugging Face model folder').setInputFiles(chatLlamaCopy('TinyChat', ['generate.json']));
  await expect(page.getByTestId('hf-folder-info')).toContainText('TinyChat: LlamaForCausalLM', { timeout: 120_000 });
  await page.getByLabel('GPU memory (GiB)').fill('0.0004');
  await page.getByLabel('GPU memory (GiB)').press('Enter');
  const refusal = page.getByTestId('hf-folder-refusal');
  await expect(refusal).toContainText(
    /Does not fit: TinyChat needs [\d.]+ (KiB|MiB) for inference, context 128.*more than the 419\.4 KiB budget\. Would fit instead: context \d+/,
    { timeout: 60_000 },
  );
  await expect(page.getByRole('button', { name: 'Load in the Playground' })).toBeDisabled();
  await refusal.getByRole('button', { name: /^Use context \d+/ }).click();
  await expect(page.getByTestId('hf-folder-refusal')).toHaveCount(0, { timeout: 60_000 });
  await expect(page.getByRole('button', { name: 'Load in the Playground' })).toBeEnabled();

  await page.getByLabel('Open a Hugging Face model folder').setInputFiles(chatLlamaCopy('NoConfig', ['config.json', 'generate.json']));
  await expect(page.getByTestId('hf-folder-error')).toHaveText(
    /^NoConfig: has no config\.json \(found: generation_config\.json, model\.safetensors, tokenizer\.json, tokenizer_config\.json\)/,
    { timeout: 120_000 },
  );
  // Nothing else was lost: the turn played, the backend, the other folder.
  await expect(page.getByTestId('turn-1').getByLabel('Predicted observation')).toBeVisible();
  await expect(page.getByLabel('Backend')).toHaveValue('copy-last');
  await expect(page.getByTestId('hf-folder')).toHaveCount(2);
  await snap(page, 'playground-hf-errors');
  expect(errors).toEqual([]);
});

test('Bench: a Hugging Face folder beside copy-last on one held-out turn, judged and scored', async ({ page }) => {
  test.setTimeout(600_000);
  const errors = collectPageErrors(page);
  await page.goto('./#/bench');
  await expect(page.getByRole('heading', { name: 'Bench', level: 1 })).toBeVisible();
  await expect(page.getByLabel('Dataset', { exact: true })).toContainText('Default dataset', { timeout: 120_000 });
  for (const box of await page.getByRole('group', { name: 'Domains' }).getByRole('checkbox').all()) {
    if (((await box.locator('xpath=..').textContent()) ?? '').trim() !== 'terminal') await box.uncheck();
  }
  await page.getByLabel('Samples per domain').fill('1');
  const backends = page.getByRole('group', { name: 'Backends' });
  await backends.getByRole('checkbox', { name: /^reference/ }).uncheck();
  await page.getByLabel('Open a Hugging Face model folder').setInputFiles(chatLlamaCopy('TinyChat', ['generate.json']));
  await expect(page.getByTestId('hf-folder-info')).toContainText('TinyChat: LlamaForCausalLM', { timeout: 120_000 });
  await page.getByRole('button', { name: 'Add to the benchmark' }).click();
  await expect(page.getByRole('button', { name: 'Add to the benchmark ✓' })).toHaveAttribute('aria-pressed', 'true');
  await page.getByLabel('Max new tokens').fill('4');
  await page.getByRole('button', { name: 'Run benchmark' }).click();
  await expect(page.getByTestId('bench-form-errors')).toHaveCount(0);
  await expect(page.getByTestId('bench-progress')).toHaveCount(0, { timeout: 480_000 });
  const overall = page.getByTestId('bench-table').locator('tbody[data-domain="overall"] tr');
  await expect(overall).toHaveCount(2, { timeout: 60_000 });
  expect(await overall.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-backend')))).toEqual(['hf:TinyChat', 'copy-last']);
  await snap(page, 'bench-hf');
  expect(errors).toEqual([]);
});

test("dropping a folder's files on the Playground's backend panel checks them as one folder", async ({ page }) => {
  const errors = collectPageErrors(page);
  await openPlayground(page);
  const names = ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
  const files = names.map((name) => ({ name, data: readFileSync(join(CHAT_LLAMA, name)).toString('base64') }));
  const transfer = await page.evaluateHandle((list) => {
    const dt = new DataTransfer();
    for (const f of list) dt.items.add(new File([Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0))], f.name));
    return dt;
  }, files);
  await page.locator('.pg-backend').dispatchEvent('drop', { dataTransfer: transfer });
  await expect(page.getByTestId('hf-folder-info')).toContainText(/^the picked files: LlamaForCausalLM, [\d.]+K parameters/, { timeout: 120_000 });
  await expect(page.getByRole('button', { name: 'Load in the Playground' })).toBeEnabled();
  expect(errors).toEqual([]);
});

test('f16 weights: the estimate halves the weights, a budget only f16 fits offers it, and the folder loads and plays in f16', async ({ page }) => {
  test.setTimeout(600_000);
  const errors = collectPageErrors(page);
  await openPlayground(page);
  await page.getByLabel('Open a Hugging Face model folder').setInputFiles(chatLlamaCopy('TinyChat', ['generate.json']));
  const info = page.getByTestId('hf-folder-info');
  await expect(info).toContainText('TinyChat: LlamaForCausalLM', { timeout: 120_000 });
  const needs = async () => {
    const m = /needs ([\d.]+) (KiB|MiB) of the [\d.]+ GiB budget \(weights ([\d.]+) (KiB|MiB)/.exec((await info.textContent()) ?? '');
    expect(m).not.toBeNull();
    const kib = (v: string, u: string) => Number(v) * (u === 'MiB' ? 1024 : 1);
    return { total: kib(m![1], m![2]), weights: kib(m![3], m![4]) };
  };
  const f32 = await needs();
  await expect(page.getByLabel('Weights')).toHaveValue('f32');
  await page.getByLabel('Weights').selectOption('f16');
  await expect(info).not.toContainText(`weights ${f32.weights}`, { timeout: 60_000 });
  const f16 = await needs();
  expect(f16.weights).toBeLessThan(0.55 * f32.weights);
  // Back to f32 with a budget between the two: refused, f16 offered, one click takes it.
  await page.getByLabel('Weights').selectOption('f32');
  await page.getByLabel('GPU memory (GiB)').fill(String(((f16.total + f32.total) / 2 / 2 ** 20).toPrecision(6)));
  await page.getByLabel('GPU memory (GiB)').press('Enter');
  const refusal = page.getByTestId('hf-folder-refusal');
  await expect(refusal).toContainText(/Does not fit: TinyChat needs .* f32 weights .* Would fit instead: .*f16 weights \(half the memory, f32 accumulation\)/, {
    timeout: 60_000,
  });
  await refusal.getByRole('button', { name: /^Use f16 weights/ }).click();
  await expect(page.getByTestId('hf-folder-refusal')).toHaveCount(0, { timeout: 60_000 });
  await expect(page.getByLabel('Weights')).toHaveValue('f16');
  await page.getByRole('button', { name: 'Load in the Playground' }).click();
  await expect(page.getByTestId('pg-model')).toContainText(/Loaded on the GPU: hf:TinyChat · LlamaForCausalLM .* · f16 weights, [\d.]+ KiB on the GPU/, {
    timeout: 120_000,
  });
  await page.getByLabel('Max tokens').fill('6');
  await page.getByLabel('Action 1').fill('ls');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByTestId('turn-1').getByTestId('turn-meta')).toContainText(/hf:TinyChat · teacher forcing · \d+ tokens?/, { timeout: 240_000 });
  await snap(page, 'playground-hf-f16');
  expect(errors).toEqual([]);
});
