// Fine-tuning a Hugging Face folder in the Train view, as a user does it: start from the tiny chat
// Llama's folder (src/model/fixtures/hf/llama-chat), read its memory estimate for LoRA rank 4
// before starting, train a few SFT steps on the default dataset and watch the loss, then download
// the adapter in PEFT's layout (adapter_config.json + adapter_model.safetensors, parsed here) and
// the merged model folder. A paused LoRA run resumes after a reload only once the same folder is
// picked again (another one is refused with what differs). Errors: a budget the run does not fit
// (refused with what would fit) and a folder without config.json (named).
import { readFileSync } from 'node:fs';
import { expect, test, type Download, type Page } from '@playwright/test';
import { ARTIFACTS, chatLlamaCopy, collectPageErrors, forbidForeignRequests, openCustomTrainForm, snap } from './helpers.ts';

async function openTrain(page: Page) {
  await openCustomTrainForm(page);
}

/** The form set for a LoRA SFT run of `steps` steps from the picked TinyChat folder. */
async function loraForm(page: Page, steps: number, evalEvery: number) {
  await page.getByLabel('Domains').selectOption('terminal');
  await page.getByLabel('Stage').selectOption('sft');
  await page.getByLabel('Start from').selectOption({ label: 'A Hugging Face folder' });
  await expect(page.getByTestId('train-hf')).toContainText('pick the folder again after a reload');
  await page.getByLabel('Open a Hugging Face model folder').setInputFiles(chatLlamaCopy('TinyChat', ['generate.json']));
  await expect(page.getByTestId('hf-folder-info')).toContainText(
    /^LlamaForCausalLM, [\d.]+K parameters \(2 layers × 32, 4 heads \/ 2 KV heads, vocabulary 1461\), context 128 · its chat template is the prompt format/,
    { timeout: 120_000 },
  );
  await page.getByLabel('Fine-tuning').selectOption('lora');
  await page.getByLabel('LoRA rank').fill('4');
  await page.getByLabel('Steps', { exact: true }).fill(String(steps));
  await page.getByLabel('Batch').fill('2');
  await page.getByLabel('Tokens per sequence').fill('64');
  await page.getByLabel('Evaluate every').fill(String(evalEvery));
  await page.getByLabel('Judged samples').fill('0');
  // Start waits for the folder's estimate of these settings, as the form says.
  await expect(page.getByTestId('train-hf-estimate')).toContainText(`LoRA rank 4, 2 × 64 tokens per step`, { timeout: 120_000 });
}

/** Collects the downloads one click gives (several files), saved under e2e/artifacts/DIR. */
async function downloadsOf(page: Page, click: () => Promise<void>, count: number, dir: string): Promise<Map<string, Buffer>> {
  const got: Download[] = [];
  const on = (d: Download) => void got.push(d);
  page.on('download', on);
  await click();
  await expect.poll(() => got.length, { timeout: 120_000 }).toBe(count);
  page.off('download', on);
  const out = new Map<string, Buffer>();
  for (const d of got) {
    const path = `${ARTIFACTS}/${dir}/${d.suggestedFilename()}`;
    await d.saveAs(path);
    out.set(d.suggestedFilename(), readFileSync(path));
  }
  return out;
}

function safetensorsHeader(bytes: Buffer): Record<string, { dtype: string; shape: number[] }> & { __metadata__?: Record<string, string> } {
  const n = Number(bytes.readBigUInt64LE(0));
  return JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
}

test("LoRA SFT from a Hugging Face folder: the estimate before starting, the live loss, the adapter in PEFT's layout and the merged folder", async ({
  page,
}) => {
  test.setTimeout(600_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await openTrain(page);
  await loraForm(page, 12, 4);
  // The random tiny model moves visibly in a few steps at a higher rate than the stage default.
  await page.getByLabel('Learning rate', { exact: true }).fill('1e-2');
  // What the run needs, by what holds it: the adapter's AdamW state only, not the base's.
  await expect(page.getByTestId('train-hf-estimate')).toContainText(
    /^LoRA rank 4, 2 × 64 tokens per step: needs [\d.]+ (KiB|MiB) of the 4\.00 GiB budget \(weights [\d.]+ (KiB|MiB), LoRA adapter [\d.]+ KiB, gradients [\d.]+ KiB, AdamW state \(adapter only\) [\d.]+ KiB, activations [\d.]+ (KiB|MiB)\)$/,
    { timeout: 60_000 },
  );
  await expect(page.getByLabel('Model preset')).toBeDisabled();
  await page.getByRole('button', { name: 'Start training' }).click();
  await expect(page.getByTestId('train-form-errors')).toHaveCount(0);
  const latest = page.getByTestId('latest-metrics');
  await expect(latest.getByRole('rowheader', { name: 'loss', exact: true })).toBeVisible({ timeout: 240_000 });
  await expect(page.getByTestId('run-state')).toHaveText('done', { timeout: 300_000 });
  await expect(page.getByTestId('run-panel')).toContainText('SFT · TinyChat (LoRA rank 4, alpha 8) · Default dataset');
  await expect(page.getByTestId('loss-chart').locator('desc')).toContainText('train loss: 12 points, latest');
  await expect(latest.getByRole('rowheader', { name: 'eval_loss' })).toBeVisible();
  const runList = page.getByTestId('run-list');
  await expect(runList).toContainText('last · step 12');
  const evalLoss = (await page.getByTestId('loss-chart').locator('desc').textContent()) ?? '';
  console.log(`[e2e] ${evalLoss}`);

  // The adapter in PEFT's layout: PEFT's names and config, and the template the run trained with.
  const adapter = await downloadsOf(
    page,
    () => runList.getByRole('button', { name: /^Download the LoRA adapter \(PEFT\) of the last checkpoint/ }).click(),
    3,
    'train-hf-adapter',
  );
  expect([...adapter.keys()].sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors', 'lwm_template.json']);
  const config = JSON.parse(adapter.get('adapter_config.json')!.toString('utf8'));
  expect(config).toMatchObject({ peft_type: 'LORA', task_type: 'CAUSAL_LM', r: 4, lora_alpha: 8, base_model_name_or_path: 'TinyChat' });
  expect([...config.target_modules].sort()).toEqual(['down_proj', 'gate_proj', 'k_proj', 'o_proj', 'q_proj', 'up_proj', 'v_proj']);
  const header = safetensorsHeader(adapter.get('adapter_model.safetensors')!);
  const names = Object.keys(header).filter((k) => k !== '__metadata__');
  expect(names).toHaveLength(2 * 7 * 2);
  for (const n of names) expect(n).toMatch(/^base_model\.model\.model\.layers\.[01]\.(self_attn\.(q|k|v|o)|mlp\.(gate|up|down))_proj\.lora_[AB]\.weight$/);
  expect(header['base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight']).toEqual({ dtype: 'F32', shape: [4, 32], data_offsets: expect.any(Array) });
  expect(header['base_model.model.model.layers.1.mlp.down_proj.lora_B.weight'].shape).toEqual([32, 4]);

  // The merged folder: the base's names, no adapter left, the tokenizer beside it.
  const merged = await downloadsOf(
    page,
    () => runList.getByRole('button', { name: /^Download the merged Hugging Face folder of the last checkpoint/ }).click(),
    6,
    'train-hf-merged',
  );
  expect([...merged.keys()].sort()).toEqual([
    'config.json',
    'generation_config.json',
    'lwm_template.json',
    'model.safetensors',
    'tokenizer.json',
    'tokenizer_config.json',
  ]);
  const weights = Object.keys(safetensorsHeader(merged.get('model.safetensors')!));
  expect(weights).toContain('model.layers.1.mlp.down_proj.weight');
  expect(weights.filter((n) => n.includes('lora'))).toEqual([]);

  await page.getByRole('heading', { name: 'Train', level: 1 }).scrollIntoViewIfNeeded();
  console.log(`[e2e] screenshot: ${await snap(page, 'train-hf')}`);

  // GSPO on the adapter: the folder is still picked in this page, and the form says it is the run's own.
  await runList.getByRole('button', { name: /^Train RL from the last checkpoint/ }).click();
  await expect(page.getByLabel('Stage')).toHaveValue('rl');
  await expect(page.getByTestId('hf-again-ok')).toHaveText('✓ TinyChat is the folder this run trained on (TinyChat).');
  await page.getByLabel('Steps', { exact: true }).fill('2');
  await page.getByLabel('Evaluate every').fill('2');
  await page.getByLabel('Group size').fill('2');
  await page.getByLabel('Prompts per step').fill('1');
  await page.getByLabel('Response length').fill('4');
  await page.getByLabel('Held-out turns judged').fill('1');
  await page.getByRole('button', { name: 'Start training' }).click();
  await expect(page.getByTestId('train-form-errors')).toHaveCount(0);
  await expect(page.getByTestId('run-panel')).toContainText('RL · TinyChat (LoRA rank 4, alpha 8)', { timeout: 60_000 });
  await expect(runList).toContainText('RL · TinyChat LoRA r4 · Default dataset');
  await expect(page.getByTestId('run-state')).toHaveText('done', { timeout: 300_000 });
  await expect(page.getByTestId('reward-chart').locator('desc')).toContainText('reward: 2 points');
  await expect(runList).toContainText('last · step 2');

  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});

test('a paused LoRA run resumes after a reload once the same folder is picked again; another folder is refused', async ({ page }) => {
  test.setTimeout(600_000);
  const errors = collectPageErrors(page);
  await openTrain(page);
  await loraForm(page, 400, 2);
  await page.getByRole('button', { name: 'Start training' }).click();
  const runList = page.getByTestId('run-list');
  await expect
    .poll(async () => Number(/last · step (\d+)/.exec((await runList.textContent()) ?? '')?.[1] ?? 0), { timeout: 240_000 })
    .toBeGreaterThanOrEqual(2);
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByTestId('run-state')).toHaveText('paused');
  await page.waitForTimeout(1500);
  await page.reload();

  const offer = page.getByTestId('resume-offer');
  await expect(offer).toContainText('was paused when the page closed', { timeout: 60_000 });
  await expect(offer.getByTestId('hf-again')).toContainText(
    'It trains on the Hugging Face folder TinyChat, which this page does not keep after a reload: pick (or drop) that folder again to resume.',
  );
  const resume = offer.getByRole('button', { name: /^Resume from step \d+$/ });
  await expect(resume).toBeDisabled();
  // Same name, same sizes, another rope_theta: not the same model.
  await offer.getByLabel('Pick the folder TinyChat again').setInputFiles(chatLlamaCopy('TinyChat', ['generate.json'], (t) => t.replace('10000.0', '20000.0')));
  await expect(offer.getByTestId('hf-again-error')).toHaveText('TinyChat is not the folder this run trained on (TinyChat): config.json differs.');
  await expect(resume).toBeDisabled();
  await offer.getByLabel('Pick the folder TinyChat again').setInputFiles(chatLlamaCopy('TinyChat', ['generate.json']));
  await expect(offer.getByTestId('hf-again-ok')).toHaveText('✓ TinyChat is the folder this run trained on (TinyChat).');
  const at = Number(/step (\d+)/.exec((await resume.textContent()) ?? '')?.[1]);
  await resume.click();
  await expect(offer).toHaveCount(0);
  await expect(page.getByTestId('loss-chart')).toContainText(`resumed at step ${at}`);
  await expect
    .poll(async () => Number(/step (\d+)/.exec((await page.getByTestId('run-step').textContent()) ?? '')?.[1] ?? 0), { timeout: 240_000 })
    .toBeGreaterThan(at);
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByTestId('run-state')).toHaveText('stopped', { timeout: 120_000 });
  expect(errors).toEqual([]);
});

test('errors: a budget the run does not fit is refused with what would fit; a folder without config.json is named', async ({ page }) => {
  const errors = collectPageErrors(page);
  await openTrain(page);
  await loraForm(page, 4, 2);
  // 1.5 MiB: the weights and the adapter fit, the activations of 2 × 64 tokens do not.
  await page.getByLabel('GPU memory (GiB)').fill('0.0015');
  const refusal = page.getByTestId('hf-folder-refusal');
  await expect(refusal).toContainText(
    /^Does not fit: TinyChat needs [\d.]+ MiB for LoRA rank 4, context 64, batch 2, f32 weights \(weights [\d.]+ KiB, LoRA adapters [\d.]+ KiB, gradients [\d.]+ KiB, AdamW m and v [\d.]+ KiB, activations [\d.]+ MiB\), more than the 1\.5 MiB budget\. Would fit instead: batch 1 \(/,
    { timeout: 60_000 },
  );
  await page.getByRole('button', { name: 'Start training' }).click();
  await expect(page.getByTestId('train-form-errors')).toContainText('Does not fit: TinyChat needs');
  await expect(page.getByTestId('run-panel')).toHaveCount(0);
  // One of the offers applied: the run fits again.
  await refusal.getByRole('button', { name: /^Use batch 1 \(/ }).click();
  await expect(page.getByLabel('Batch')).toHaveValue('1');
  await expect(page.getByTestId('hf-folder-refusal')).toHaveCount(0, { timeout: 60_000 });
  await expect(page.getByTestId('train-hf-estimate')).toContainText(/^LoRA rank 4, 1 × 64 tokens per step: needs [\d.]+ MiB of the 1\.5 MiB budget/);

  await page.getByLabel('Open a Hugging Face model folder').setInputFiles(chatLlamaCopy('NoConfig', ['config.json', 'generate.json']));
  await expect(page.getByTestId('hf-folder-error')).toHaveText(
    /^NoConfig: has no config\.json \(found: generation_config\.json, model\.safetensors, tokenizer\.json, tokenizer_config\.json\)/,
    { timeout: 120_000 },
  );
  await page.getByRole('button', { name: 'Start training' }).click();
  await expect(page.getByTestId('train-form-errors')).toContainText('NoConfig: has no config.json');
  await snap(page, 'train-hf-errors');
  expect(errors).toEqual([]);
});
