// A lost GPU device in the middle of training, as a person meets it: start a tiny SFT run, wait
// for a checkpoint, destroy the device from the System view (the jobs worker survives the view
// change), come back to Train, read that the device was lost, accept the offer to resume, and see
// the run continue from its last checkpoint — same curve, no restart from step 0 — to the end.
import { expect, test, type Page } from '@playwright/test';
import { collectPageErrors, forbidForeignRequests, openCustomTrainForm, snap } from './helpers.ts';

// Enough steps that the run is still going when the device is destroyed, even on a fast adapter.
const STEPS = 60;
const EVAL_EVERY = 4;

async function shownStep(page: Page): Promise<number> {
  const text = (await page.getByTestId('run-step').textContent()) ?? '';
  return Number(/step (\d+)/.exec(text)?.[1] ?? -1);
}

async function trainLossPoints(page: Page): Promise<number> {
  const desc = (await page.getByTestId('loss-chart').locator('desc').textContent()) ?? '';
  return Number(/train loss: (\d+) points/.exec(desc)?.[1] ?? 0);
}

test('device loss mid-training: the run fails cleanly and resumes from its last checkpoint', async ({ page }) => {
  test.setTimeout(600_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await openCustomTrainForm(page);

  // Tiny settings: one domain, micro preset, 2 × 32 tokens per step, a checkpoint every 4 steps.
  await page.getByLabel('Domains').selectOption('terminal');
  await page.getByLabel('Stage').selectOption('sft');
  await page.getByLabel('Model preset').selectOption('micro');
  await page.getByLabel('Steps', { exact: true }).fill(String(STEPS));
  await page.getByLabel('Batch').fill('2');
  await page.getByLabel('Tokens per sequence').fill('32');
  await page.getByLabel('Evaluate every').fill(String(EVAL_EVERY));
  await page.getByLabel('Judged samples').fill('0');
  await page.getByRole('button', { name: 'Start training' }).click();
  await expect(page.getByTestId('train-form-errors')).toHaveCount(0);
  await expect(page.getByTestId('run-state')).toHaveText('running', { timeout: 240_000 });

  // Wait for a stored checkpoint, then lose the device while the run is still going.
  const runList = page.getByTestId('run-list');
  const lastCheckpoint = async () => Number(/last · step (\d+)/.exec((await runList.textContent()) ?? '')?.[1] ?? 0);
  await expect.poll(lastCheckpoint, { timeout: 240_000 }).toBeGreaterThanOrEqual(EVAL_EVERY);
  const beforeLoss = await shownStep(page);
  expect(beforeLoss, 'the run must still be going when the device is lost').toBeLessThan(STEPS);

  await page.goto('./#/system');
  await expect(page.getByRole('heading', { name: 'System', level: 1 })).toBeVisible();
  await page.getByText('Recovery').click();
  await page.getByRole('button', { name: 'Simulate device loss' }).click();
  await expect(page.getByRole('alert')).toContainText('The GPU device was lost');

  // Back in Train: the run failed, its panel says why (once: nothing above the form), the list
  // says 'failed', and the page offers to resume from the last checkpoint.
  await page.goto('./#/train');
  const runError = page.getByTestId('run-error');
  await expect(runError).toContainText('The GPU device was lost');
  await expect(runError).toContainText('can be resumed from its last checkpoint');
  await expect(page.getByTestId('train-error')).toHaveCount(0);
  await expect(page.getByTestId('run-state')).toHaveText('failed');
  await expect(runList.locator('tbody tr')).toHaveCount(1);
  await expect(runList.locator('.pill')).toHaveText('failed');
  const offer = page.getByTestId('resume-offer');
  await expect(offer).toContainText('when the GPU device was lost');
  const offerText = (await offer.textContent()) ?? '';
  const checkpointStep = Number(/last checkpoint is at step (\d+)/.exec(offerText)?.[1]);
  expect(checkpointStep).toBeGreaterThanOrEqual(EVAL_EVERY);
  expect(checkpointStep % EVAL_EVERY).toBe(0);
  expect(checkpointStep).toBeLessThan(STEPS);
  console.log(`[e2e] went to the System view at step ${beforeLoss}; last checkpoint at step ${checkpointStep}`);
  const shot = await snap(page, 'train-device-lost');
  console.log(`[e2e] screenshot: ${shot}`);

  // What is stored says the same: a second tab (a reload would end this tab's job worker) lists
  // the run as failed, with its message.
  const other = await page.context().newPage();
  const otherErrors = collectPageErrors(other);
  await other.goto('./#/train');
  await expect(other.getByTestId('run-list').locator('.pill')).toHaveText('failed');
  await expect(other.getByTestId('run-error')).toContainText('The GPU device was lost');
  await other.close();
  expect(otherErrors).toEqual([]);

  // Resume: the job starts from the checkpoint on a fresh device and the curve keeps its points.
  await offer.getByRole('button', { name: `Resume from step ${checkpointStep}` }).click();
  await expect(offer).toHaveCount(0);
  await expect(page.getByTestId('train-error')).toHaveCount(0);
  await expect(runError).toHaveCount(0);
  expect(await trainLossPoints(page), 'the curve keeps the points up to the checkpoint').toBeGreaterThanOrEqual(checkpointStep);
  await expect(page.getByText(`resuming from the checkpoint at step ${checkpointStep}`)).toBeAttached({ timeout: 120_000 });
  await expect(page.getByTestId('loss-chart')).toContainText(`resumed at step ${checkpointStep}`);
  // The worker's own log (above) says where it started; the run then moves past the checkpoint.
  await expect.poll(() => shownStep(page), { timeout: 240_000 }).toBeGreaterThan(checkpointStep);
  await expect(page.getByTestId('run-state')).toHaveText('done', { timeout: 300_000 });
  await expect(page.getByTestId('loss-chart').locator('desc')).toContainText(`train loss: ${STEPS} points, latest`);
  await expect(runList).toContainText(`last · step ${STEPS}`);

  await page.getByRole('heading', { name: 'Train', level: 1 }).scrollIntoViewIfNeeded();
  const done = await snap(page, 'train-device-lost-resumed');
  console.log(`[e2e] screenshot: ${done}`);
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});
