// Training as a person does it (SwiftShader in CI). The default choice, the quick recipe: its
// time estimate says the adapter is a CPU fallback and how long the recipe would take here; start
// it, see it generate its data and take a step; reload, restart it, and stop it while it
// regenerates its data (the whole recipe takes hours here, one step of it half a minute).
// A custom run on the micro preset with tiny settings: start an SFT run on the default dataset and
// watch the loss appear; pause and resume; reload mid-run, accept the offer to resume and see the
// curve continue from the checkpoint; download a checkpoint.
import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { ARTIFACTS, collectPageErrors, forbidForeignRequests, openCustomTrainForm, snap } from './helpers.ts';

// Enough steps that the run is still going when the page reloads, even on a fast adapter.
const STEPS = 120;
const EVAL_EVERY = 8;

// The file's tests share nothing (each has its own page and storage): they may run in both
// workers at once. This file holds two of the longest tests and comes late in file
// order, where a worker would otherwise take a whole file while the other sits idle.
test.describe.configure({ mode: 'parallel' });

/** The custom run's form (the default dataset is stored on first start; the form lists it once it is). */
async function openTrain(page: Page) {
  await openCustomTrainForm(page);
}

/** "step N / 40" under the progress bar. */
async function shownStep(page: Page): Promise<number> {
  const text = (await page.getByTestId('run-step').textContent()) ?? '';
  return Number(/step (\d+)/.exec(text)?.[1] ?? -1);
}

test('the quick recipe, the default: a time estimate naming the CPU fallback; with task play it generates its data, takes a step, and stops', async ({
  page,
}) => {
  test.setTimeout(900_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await page.goto('./#/train');
  await expect(page.getByRole('heading', { name: 'Train', level: 1 })).toBeVisible();
  await expect(page.getByRole('radio', { name: /^Quick recipe/ })).toBeChecked();
  const domain = page.getByLabel('Domain', { exact: true });
  await expect(domain).toHaveValue('terminal');
  await expect(domain.locator('option')).toHaveText(['mcp', 'search', 'terminal', 'swe', 'android', 'web', 'os']);
  await expect(page.getByTestId('recipe-cost')).toContainText(/quick model \(4 × 128, .*M parameters\) · SFT 2,000 steps of 16 × 256 tokens .* FLOPs/);

  // The form measures a step of the recipe's model by itself; SwiftShader is named before and after.
  const estimate = page.getByTestId('recipe-estimate');
  await expect(estimate).toContainText('This adapter is a CPU fallback (SwiftShader)', { timeout: 60_000 });
  await expect(estimate).toContainText(/the quick recipe would take about \d+ (hours|days) here; on a laptop GPU about \d+ minutes\./, { timeout: 420_000 });
  // On a CPU fallback one sequence is timed and scaled to the recipe's 16 × 256 by FLOPs.
  await expect(page.getByTestId('step-measure')).toContainText(
    /measured: .* per step of 1 × 256 tokens of quick \(warm-up step excluded, scaled by FLOPs to the recipe’s 16 × 256\)/,
  );
  console.log(`[e2e] ${await estimate.locator('p').first().textContent()} (${await page.getByTestId('step-measure').textContent()})`);
  await snap(page, 'train-recipe-form');

  // The custom form costs its run from the same measurement.
  await page.getByRole('radio', { name: /^Custom run/ }).check();
  await expect(page.getByTestId('custom-estimate')).toContainText(
    /^This run: 40 steps of 4 × 512 tokens, .* FLOPs \(the quick recipe trains \d+× that\): about .* of training steps on this adapter/,
  );
  await page.getByRole('radio', { name: /^Quick recipe/ }).check();

  // Task play (for a Sim RL world model): none by default; the terminal families with a check, and
  // the tool server's; a domain without any says so, and switching back offers them again.
  const play = page.getByLabel('Task play', { exact: true });
  await expect(play).toHaveValue('');
  await expect(play.locator('option')).toContainText(['none', /^every family with a check \(\d+\)$/, 'write_word', 'make_dir']);
  await domain.selectOption('mcp');
  await expect(play.locator('option')).toContainText(['none', 'every family with a check (2)', 'write_file', 'add_event']);
  await domain.selectOption('search');
  await expect(play).toBeDisabled();
  await expect(page.locator('#train-recipeTasks-hint')).toHaveText('no task family of search has a check yet');
  await domain.selectOption('terminal');
  await play.selectOption('write_word');
  await expect(page.locator('#train-recipeTasks-hint')).toContainText('for a Sim RL world model');

  // One click: the worker generates the data (the recipe's and the task play), then trains; a step appears.
  await page.getByRole('button', { name: 'Train the quick recipe' }).click();
  await expect(page.getByTestId('run-summary')).toContainText('Quick recipe · terminal', { timeout: 60_000 });
  await expect(page.getByTestId('run-preparing')).toContainText(/terminal trajectories/, { timeout: 120_000 });
  await expect.poll(() => shownStep(page), { timeout: 420_000 }).toBeGreaterThanOrEqual(1);
  await expect(page.getByTestId('run-summary')).toContainText(
    /Quick recipe · terminal · task play of write_word \([\d,]+\) · SFT · quick · [\d,]+ generated trajectories/,
  );
  const log = page.locator('pre.train-log');
  await expect(log).toContainText(/generated \d+ terminal trajectories \(lwm gen --domain terminal --seed 7001\)/);
  await expect(log).toContainText(/and \d+ task-play trajectories of write_word \(lwm gen --domain terminal --tasks write_word --n \d+ --seed 7001\)/);
  const generated = /generated (\d+) terminal trajectories/.exec((await log.textContent()) ?? '')![1];

  // A reload mid-run: the page offers to take the run up again (no checkpoint yet: from its
  // start), and the worker regenerates the run's trajectories (no dataset holds them), as many as
  // it generated. A stop while it does ends the run stopped at once (the step above showed that
  // the recipe trains; a second step would cost as much again here).
  await page.reload();
  const offer = page.getByTestId('resume-offer');
  await expect(offer).toContainText('Quick recipe · terminal · task play was training when the page closed', { timeout: 60_000 });
  await offer.getByRole('button', { name: 'Restart it' }).click();
  const count = Number(generated).toLocaleString('en-US');
  await expect(page.getByTestId('run-preparing')).toContainText(
    new RegExp(`Regenerating the run’s terminal trajectories: [\\d,]+ of ${count}…|Generated the terminal trajectories`),
    { timeout: 120_000 },
  );
  await expect(page.getByTestId('run-state')).toHaveText('running');
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByTestId('run-state')).toHaveText('stopped', { timeout: 180_000 });
  await expect(page.getByTestId('run-list')).toContainText('Quick recipe · terminal · task play');
  await snap(page, 'train-recipe-run');
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});

test('train SFT on the default dataset: live loss, pause/resume, reload and resume the curve, download', async ({ page }) => {
  test.setTimeout(600_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await openTrain(page);

  // Tiny settings: one domain, 2 × 32 tokens per step, a checkpoint every 4 steps.
  await page.getByLabel('Domains').selectOption('terminal');
  await page.getByLabel('Stage').selectOption('sft');
  // The default preset holds the initial state and the newest turn; CI picks micro for speed.
  await expect(page.getByLabel('Model preset')).toHaveValue('mini');
  await page.getByLabel('Model preset').selectOption('micro');
  // SFT trains with the Trajectories panel's mask settings, and the form says so.
  await expect(page.getByTestId('train-mask')).toContainText("Trajectories panel's current settings — the default thresholds and ratios");
  await page.getByLabel('Steps', { exact: true }).fill('ten');
  await page.getByRole('button', { name: 'Start training' }).click();
  await expect(page.getByTestId('train-form-errors')).toContainText("Steps must be a number; got 'ten'.");
  await expect(page.getByLabel('Steps', { exact: true })).toBeFocused();
  await page.getByLabel('Steps', { exact: true }).fill(String(STEPS));
  await page.getByLabel('Batch').fill('2');
  await page.getByLabel('Tokens per sequence').fill('32');
  await page.getByLabel('Evaluate every').fill(String(EVAL_EVERY));
  await page.getByLabel('Judged samples').fill('0');
  await page.getByRole('button', { name: 'Start training' }).click();
  await expect(page.getByTestId('train-form-errors')).toHaveCount(0);

  // The loss appears, live.
  const latest = page.getByTestId('latest-metrics');
  await expect(latest.getByRole('rowheader', { name: 'loss', exact: true })).toBeVisible({ timeout: 240_000 });
  await expect(page.getByTestId('run-state')).toHaveText('running');
  // How much of each sample the model sees, stated under the progress bar.
  await expect(page.getByTestId('run-coverage')).toContainText(/of the initial state.*of the system prompt/);
  console.log(`[e2e] first loss at step ${await shownStep(page)}`);

  // Pause: the state says so and the step count stands still; resume: it moves again.
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByTestId('run-state')).toHaveText('paused');
  // The pause takes hold between steps: let the step in flight (and its checkpoint) finish.
  await page.waitForTimeout(2000);
  const pausedAt = await shownStep(page);
  await page.waitForTimeout(2000);
  expect(await shownStep(page)).toBe(pausedAt);
  await page.getByRole('button', { name: 'Resume' }).click();
  await expect(page.getByTestId('run-state')).toHaveText('running');
  await expect.poll(() => shownStep(page), { timeout: 120_000 }).toBeGreaterThan(pausedAt);

  // Wait for a stored checkpoint past the first one, then reload in the middle of the run.
  const runList = page.getByTestId('run-list');
  const lastCheckpoint = async () => Number(/last · step (\d+)/.exec((await runList.textContent()) ?? '')?.[1] ?? 0);
  await expect.poll(lastCheckpoint, { timeout: 240_000 }).toBeGreaterThanOrEqual(2 * EVAL_EVERY);
  const beforeReload = await shownStep(page);
  expect(beforeReload, 'the run must still be going when the page reloads').toBeLessThan(STEPS);
  await page.reload();

  // The page offers to resume from the last checkpoint; accepting continues the same curve.
  const offer = page.getByTestId('resume-offer');
  await expect(offer).toContainText('was training when the page closed', { timeout: 60_000 });
  const offerText = (await offer.textContent()) ?? '';
  const checkpointStep = Number(/last checkpoint is at step (\d+)/.exec(offerText)?.[1]);
  expect(checkpointStep % EVAL_EVERY).toBe(0);
  console.log(`[e2e] reloaded at step ${beforeReload}; last checkpoint at step ${checkpointStep}`);
  // The chart still holds the old curve before resuming.
  await expect(page.getByTestId('loss-chart').locator('desc')).toContainText('train loss:');
  await offer.getByRole('button', { name: `Resume from step ${checkpointStep}` }).click();
  await expect(offer).toHaveCount(0);
  await expect(page.getByTestId('loss-chart')).toContainText(`resumed at step ${checkpointStep}`);
  await expect.poll(() => shownStep(page), { timeout: 240_000 }).toBeGreaterThan(checkpointStep);
  await expect(page.getByTestId('run-state')).toHaveText('done', { timeout: 300_000 });
  // One continuous curve: every step 1..STEPS has a training loss, old ones and new ones.
  await expect(page.getByTestId('loss-chart').locator('desc')).toContainText(`train loss: ${STEPS} points, latest`);
  await expect(page.getByTestId('loss-chart').locator('desc')).toContainText(`at step ${STEPS}`);
  await expect(latest.getByRole('rowheader', { name: 'eval_loss' })).toBeVisible();
  await expect(latest.getByRole('rowheader', { name: 'unigram_loss' })).toBeVisible();
  // The latest evaluation of each domain has a table of its own (here the one domain trained on).
  const byDomain = page.getByTestId('domain-eval');
  await expect(byDomain.getByRole('rowheader', { name: 'terminal' })).toBeVisible();
  await expect(byDomain.getByRole('columnheader', { name: 'eval_loss' })).toBeVisible();
  await expect(byDomain.getByRole('row').filter({ hasText: 'terminal' })).toContainText(String(STEPS));
  await expect(latest.getByRole('rowheader', { name: 'eval_loss/terminal' })).toHaveCount(0);
  await expect(runList).toContainText(`last · step ${STEPS}`);

  // Download the last checkpoint: a safetensors file with the stage and tokenizer in its metadata.
  const download = page.waitForEvent('download');
  await runList.getByRole('button', { name: /^Download the last checkpoint/ }).click();
  const file = await download;
  expect(file.suggestedFilename()).toMatch(new RegExp(`-sft-last-step${STEPS}\\.safetensors$`));
  const path = `${ARTIFACTS}/${file.suggestedFilename()}`;
  await file.saveAs(path);
  const bytes = readFileSync(path);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8'));
  expect(header.__metadata__.stage).toBe('sft');
  expect(header.__metadata__.tokenizer).toBeTruthy();
  // Hugging Face tools load it: format "pt", weights only (the optimizer state is a second file).
  expect(header.__metadata__.format).toBe('pt');
  expect(Object.keys(header)).toContain('wte.weight');
  expect(Object.keys(header).filter((k) => k.startsWith('optimizer.'))).toEqual([]);

  await page.getByRole('heading', { name: 'Train', level: 1 }).scrollIntoViewIfNeeded();
  const shot = await snap(page, 'train-view');
  console.log(`[e2e] screenshot: ${shot}`);
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});

test('without WebGPU the Train view says so and points to the System view', async ({ page }) => {
  await page.addInitScript(() => {
    delete (Navigator.prototype as unknown as { gpu?: unknown }).gpu;
  });
  const errors = collectPageErrors(page);
  await openTrain(page);
  await page.getByRole('button', { name: 'Start training' }).click();
  const alert = page.getByRole('alert').filter({ hasText: 'Training needs WebGPU' });
  await expect(alert).toContainText('navigator.gpu is missing');
  await alert.getByRole('link', { name: 'System view' }).click();
  await expect(page).toHaveURL(/#\/system$/);
  expect(errors).toEqual([]);
});

test('RL reward and SFT label settings: the method’s three rewards, an endpoint judge, rejection-sampled labels', async ({ page }) => {
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await openTrain(page);
  await page.getByLabel('Stage').selectOption('rl');
  const reward = page.getByLabel('Reward', { exact: true });
  await expect(reward.locator('option')).toHaveText(['Rubric + verifier', 'Binary: closer to the reference (A/B)', 'Binary: Turing test']);
  await reward.selectOption('turing');
  await expect(page.locator('#train-reward-hint')).toContainText('takes the sample for the real environment');
  await page.getByLabel('Judge', { exact: true }).selectOption('endpoint');
  await page.getByLabel('Judge base URL').fill('localhost:8000');
  await page.getByLabel('Judge API key').fill('sk-never-stored');
  await page.getByRole('button', { name: 'Start training' }).click();
  const problems = page.getByTestId('train-form-errors');
  await expect(problems).toContainText('Judge base URL must start with http:// or https://');
  await expect(problems).toContainText('Judge model: the model name the endpoint serves.');
  // The key is kept in memory only, never in the persisted form.
  expect(await page.evaluate(() => localStorage.getItem('lwm.trainForm') ?? '')).not.toContain('sk-never-stored');

  await page.getByLabel('Stage').selectOption('sft');
  await page.getByLabel('Labels', { exact: true }).selectOption('rejection');
  await page.getByLabel('Teacher', { exact: true }).selectOption('local');
  await page.getByLabel('Judge', { exact: true }).selectOption('local');
  await page.getByRole('button', { name: 'Start training' }).click();
  await expect(problems).toContainText('Rejection sampling with the local teacher samples from the starting checkpoint');
  await expect(page.getByLabel('Keep threshold')).toHaveValue('4');
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});
