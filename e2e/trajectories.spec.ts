import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { collectPageErrors, forbidForeignRequests, snap } from './helpers.ts';

async function openTrajectories(page: Page) {
  await page.goto('./#/trajectories');
  await expect(page.getByRole('heading', { name: 'Trajectories', level: 1 })).toBeVisible();
  await expect(page.getByTestId('trajectory-row').first()).toBeVisible({ timeout: 120_000 });
  await expect(page.getByTestId('mask-stats')).toBeVisible({ timeout: 60_000 });
}

test('filter by a mask category, open a trajectory, read its badges and token colours, change the echo ratio', async ({ page }) => {
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await openTrajectories(page);
  const count = page.getByTestId('list-count');
  const all = await count.textContent();

  await page.getByLabel('Mask category').selectOption('echo');
  await expect(count).not.toHaveText(all!);
  await expect(count).toHaveText(/^\d+ of /);
  await page.getByTestId('trajectory-row').first().click();
  await expect(page).toHaveURL(/#\/trajectories\/[^/]+$/);
  const detail = page.getByTestId('trajectory-detail');
  await expect(detail).toBeVisible();

  // The system prompt's five fields, collapsible.
  for (const f of ['task_description', 'action_space', 'initial_state', 'demonstrations', 'simulation_instruction']) {
    await expect(detail.getByTestId(`sp-${f}`)).toBeVisible();
  }
  // An echo turn: its badge, its four metrics, its loss ratio and faint token colours.
  const echo = detail.locator('[data-testid="turn"][data-category="echo"]').first();
  await echo.scrollIntoViewIfNeeded();
  await expect(echo.getByTestId('category-badge')).toHaveText('Echo');
  await expect(echo.getByTestId('turn-metrics')).toHaveText(/OL \d\.\d\d · Nov \d\.\d\d · Jac \d\.\d\d · R \d+\.\d/);
  await expect(echo.getByTestId('turn-loss')).toHaveText('loss 5%');
  const echoToken = echo.locator('[data-testid="token-view"] .tok').first();
  await expect(echoToken).toHaveAttribute('style', /var\(--weight-color\) 4%/);
  // Any retrieval turn in the same dataset carries full weight, drawn at full strength.
  const badges = detail.getByTestId('category-badge');
  expect(await badges.count()).toBeGreaterThan(1);
  await expect(page.getByTestId('token-legend')).toContainText('deterministic');
  await expect(detail.locator('.tok.sp-deterministic').first()).toBeAttached();
  const shot = await snap(page, 'trajectory-view');
  console.log(`[e2e] screenshot: ${shot}`);

  // The URL names the open trajectory: a reload opens it again.
  const url = page.url();
  await page.reload();
  await expect(page.getByTestId('trajectory-detail')).toBeVisible({ timeout: 60_000 });
  expect(page.url()).toBe(url);

  // Echo ratio 5% → 100%: the badge's ratio, the token colours and the statistics follow.
  const mean = page.getByTestId('mask-mean-weight');
  await expect(mean).toHaveText(/\d\.\d{3}/);
  const before = await mean.textContent();
  const ratio = page.getByLabel('Echo ratio', { exact: true });
  await ratio.fill('1');
  const echoAfter = page.getByTestId('trajectory-detail').locator('[data-testid="turn"][data-category="echo"]').first();
  await expect(echoAfter.getByTestId('turn-loss')).toHaveText('loss 100%');
  await expect(echoAfter.locator('[data-testid="token-view"] .tok').first()).toHaveAttribute('style', /var\(--weight-color\) 70%/);
  await expect(mean).not.toHaveText(before!);
  const after = await mean.textContent();
  expect(Number(after)).toBeGreaterThan(Number(before));

  // A bad value is refused with a reason, and the last valid one stays in force.
  await ratio.fill('1.5');
  await expect(page.getByRole('alert').filter({ hasText: 'Echo ratio: must be at most 1' })).toBeVisible();
  await expect(mean).toHaveText(after!);

  // Settings survive a reload, and the Data view's statistics use them too.
  await page.reload();
  await expect(page.getByLabel('Echo ratio', { exact: true })).toHaveValue('1');
  await page.getByRole('link', { name: 'Data', exact: true }).click();
  await expect(page.getByTestId('mean-weight-overall')).toHaveText(after!);
  await page.getByRole('link', { name: 'Trajectories', exact: true }).click();
  await page.getByRole('button', { name: 'Reset to defaults' }).click();
  await expect(page.getByLabel('Echo ratio', { exact: true })).toHaveValue('0.05');
  await expect(page.getByTestId('mask-mean-weight')).toHaveText(before!);

  // Thresholds move turns between categories live.
  const echoCount = Number(await page.getByTestId('count-echo').textContent());
  await page.getByLabel('Echo Min. Jac').fill('0.1');
  await page.getByLabel('Echo Max. Nov').fill('0.9');
  await expect(page.getByTestId('count-echo')).not.toHaveText(String(echoCount));
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});

test('search, domain and length filters; the list is usable at 390 px', async ({ page }) => {
  await openTrajectories(page);
  const count = page.getByTestId('list-count');
  const terminal = readFileSync('public/default-dataset.jsonl', 'utf8')
    .split('\n')
    .filter((l) => l.includes('"domain":"terminal"')).length;
  await page.getByLabel('Domain').selectOption('terminal');
  await expect(count).toHaveText(new RegExp(`^${terminal} of `));
  await page.getByLabel('Min. turns').fill('30');
  await page.getByLabel('Max. turns').fill('5');
  await expect(page.getByText('Min. turns is larger than Max. turns')).toBeVisible();
  await page.getByRole('button', { name: 'Clear' }).click();
  await page.getByLabel('Search', { exact: true }).fill('env-web-20240501-00007');
  await expect(count).toHaveText(/^1 of /);
  // Keyboard only: from the search field, Tab reaches the row and Enter opens it.
  await page.getByLabel('Search', { exact: true }).focus();
  const row = page.getByTestId('trajectory-row').first();
  for (let i = 0; i < 12 && !(await row.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('Tab');
  await expect(row).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/#\/trajectories\/env-web-20240501-00007$/);
  await expect(page.getByRole('heading', { name: 'env-web-20240501-00007' })).toBeFocused();

  // Dark mode follows the system setting.
  await page.emulateMedia({ colorScheme: 'dark' });
  await snap(page, 'trajectory-view-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  // At 390 px the list and the open trajectory take turns on screen.
  await page.setViewportSize({ width: 390, height: 800 });
  await expect(page.getByTestId('trajectory-list')).toBeHidden();
  await page.getByRole('link', { name: '← All trajectories' }).click();
  await expect(page).toHaveURL(/#\/trajectories\/?$/);
  await page.getByTestId('trajectory-row').first().click();
  await expect(page.getByTestId('trajectory-detail')).toBeVisible();
  await snap(page, 'trajectory-view-narrow');
});

test('10,000 trajectories stay a short DOM and scroll to the end', async ({ page }) => {
  test.setTimeout(300_000);
  await page.goto('./#/data');
  await expect(page.getByTestId('stats-table')).toBeVisible({ timeout: 120_000 });
  const lines: string[] = [];
  for (let i = 0; i < 10_000; i++) {
    const n = String(i).padStart(5, '0');
    lines.push(
      JSON.stringify({
        id: `bulk-${n}`,
        domain: ['terminal', 'web', 'mcp'][i % 3],
        system_prompt: { task_description: 'bulk', action_space: '', initial_state: '', demonstrations: '', simulation_instruction: '' },
        turns: [
          { action: `echo item ${n}`, observation: `item ${n}` },
          { action: `cat file${i % 50}.txt`, observation: `contents of file ${i % 50}: ${'lorem ipsum '.repeat(i % 7)}` },
        ],
      }),
    );
  }
  await page.getByTestId('import-input').setInputFiles({ name: 'bulk.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(lines.join('\n')) });
  await expect(page.getByTestId('import-result')).toContainText('Imported 10,000 trajectories', { timeout: 120_000 });
  await page.getByRole('link', { name: 'Trajectories', exact: true }).click();
  await expect(page.getByTestId('list-count')).toHaveText('10,000 of 10,000 trajectories', { timeout: 60_000 });
  const rows = page.getByTestId('trajectory-row');
  expect(await rows.count()).toBeLessThan(60);
  const list = page.getByTestId('trajectory-list');
  for (let k = 1; k <= 10; k++) await list.evaluate((el, f) => (el.scrollTop = el.scrollHeight * f), k / 10);
  await expect(page.getByRole('link', { name: /bulk-09999/ })).toBeVisible();
  expect(await rows.count()).toBeLessThan(60);
});
