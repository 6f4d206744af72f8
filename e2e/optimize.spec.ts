// Prompt optimisation as a person runs it: from the Prompts view's versions, "Optimise" v0 on the
// default dataset with the copy-last baseline as the simulated model, the local judge and the
// offline optimiser, 2 rounds × 2 candidates; reload in the middle and resume (scored templates
// are kept); see the lineage (candidates per round with scores and paired tests), the chart of
// the best score per round and the test score; open a candidate's diff against its parent;
// promote a candidate to a template version and find it in the versions list and the SFT mix.
import { expect, test } from '@playwright/test';
import { collectPageErrors, forbidForeignRequests, snap } from './helpers.ts';

test('Optimise v0 with the offline optimiser: lineage, chart, diff, resume after reload, promote', async ({ page }) => {
  test.setTimeout(600_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await page.goto('./#/prompts');
  await expect(page.getByTestId('versions')).toContainText('v0', { timeout: 120_000 });
  await page.getByRole('link', { name: 'Optimise v0' }).click();
  const form = page.getByTestId('optimise-form');
  await expect(form.getByLabel('Start from')).toHaveValue('v0');
  await expect(form.getByLabel('Dataset', { exact: true })).toContainText('Default dataset', { timeout: 120_000 });
  // All seven domains, every trajectory held out: evaluations long enough to reload in the middle of one.
  await expect(form.getByRole('group', { name: 'Domains' }).getByRole('checkbox', { checked: true })).toHaveCount(7);
  // A mistyped number is named with what it got.
  await form.getByLabel('Rounds').fill('two');
  await form.getByRole('button', { name: 'Start optimisation' }).click();
  await expect(page.getByTestId('optimise-form-errors')).toContainText("Rounds must be a whole number from 1 to 100; got 'two'.");
  await form.getByLabel('Rounds').fill('2');
  await form.getByLabel('Candidates per round').fill('2');
  await form.getByLabel('Dev samples per domain').fill('200');
  await form.getByLabel('Test samples per domain').fill('50');
  await form.getByLabel('Eval share').fill('1');
  await expect(form.getByLabel('Simulated model')).toHaveValue('copy-last');
  await expect(form.getByLabel('Judge', { exact: true })).toHaveValue('local');
  await expect(form.getByLabel('Optimiser')).toHaveValue('offline');
  await form.getByRole('button', { name: 'Start optimisation' }).click();
  await expect(page.getByTestId('optimise-form-errors')).toHaveCount(0);

  // Reload while it runs (the job reads the dataset, then scores each template): the stored
  // state is offered for resuming after the reload, with what was already scored kept.
  await expect(page.getByTestId('optimise-progress')).toBeVisible();
  await page.reload();
  const offer = page.getByTestId('optimise-interrupted');
  await expect(offer).toContainText('was running when the page closed', { timeout: 60_000 });
  console.log(`[e2e] offered after reload: ${await offer.textContent()}`);
  await offer.getByRole('button', { name: 'Resume' }).click();
  await expect(offer).toHaveCount(0);
  await expect(page.getByTestId('optimise-progress')).toHaveCount(0, { timeout: 300_000 });
  await expect(page.getByTestId('optimise-list')).toContainText('done');

  // The lineage: the start, then two rounds of two candidates, each with its score and paired test.
  const lineage = page.getByTestId('lineage');
  await expect(lineage.getByTestId('round-0').getByRole('button')).toHaveCount(1);
  for (const r of [1, 2]) await expect(lineage.getByTestId(`round-${r}`).getByRole('button')).toHaveCount(2);
  const first = lineage.getByTestId('candidate-r1c1');
  await expect(first).toContainText(/\d+\.\d ± \d+\.\d/);
  await expect(first).toContainText(/Δ [+−]\d+\.\d .* p /);
  await expect(first).toContainText(/added ".*" for /);
  await expect(page.getByTestId('best-chart').locator('circle.lineage-best')).toHaveCount(3);
  await expect(page.getByTestId('test-score')).toContainText(/\d+\.\d on 350 held-out samples/);

  // The diff of a round-2 candidate against its parent.
  await lineage.getByTestId('candidate-r2c1').click();
  const details = page.getByTestId('candidate-details');
  await expect(details).toContainText('r2c1 against its parent');
  await details.getByTestId('candidate-diff').scrollIntoViewIfNeeded();
  await expect(details.getByTestId('candidate-diff')).toHaveAttribute('data-ready', 'true', { timeout: 60_000 });
  await expect(details.getByTestId('candidate-diff').locator('.line-insert, .char-insert').first()).toBeAttached();
  await snap(page, 'optimize-lineage');
  await details.scrollIntoViewIfNeeded();
  await page.getByRole('heading', { name: /^Lineage of/ }).scrollIntoViewIfNeeded();
  await page.locator('article', { has: page.getByRole('heading', { name: /^Lineage of/ }) }).screenshot({ path: 'docs/screenshots/prompts-lineage.png' });

  // Promote it, into the SFT mix: it is the next version, with its parent and the optimiser's note.
  await details.getByLabel('add to the SFT template mix').check();
  await details.getByRole('button', { name: 'Promote r2c1 to a template version' }).click();
  await expect(details.getByTestId('promoted-as')).toContainText('Saved as template version v3');
  await expect(lineage.getByTestId('candidate-r2c1')).toContainText('v3');
  await page.getByRole('link', { name: 'Templates', exact: true }).click();
  const versions = page.getByTestId('versions');
  const row = versions.locator('tr', { has: page.getByRole('rowheader', { name: 'v3', exact: true }) });
  await expect(row).toContainText(/optimised \(Optimise v0 .*, r2c1, dev \d+\.\d\): added /);
  await expect(row.locator('td').first()).toHaveText(/^(v0|r1c\d)$|^v0$/);
  await expect(page.getByLabel('SFT weight of v3')).toHaveValue('1');
  expect(foreign).toEqual([]);
  expect(errors).toEqual([]);
});
