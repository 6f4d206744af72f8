import { expect, test, type Page } from '@playwright/test';
import { collectPageErrors, forbidForeignRequests, snap } from './helpers.ts';

// A dataset of hostile text: markup and script that would run if any view used it as HTML, a
// bidi override, zero-width characters, terminal escapes, a 1 MB line and `__proto__` keys. The
// app must import it, show it as text in every view, run none of it and not hang.
const SCRIPT = '<script>window.__pwned = (window.__pwned || 0) + 1</script>';
const IMG = '<img src=x onerror="window.__pwned = (window.__pwned || 0) + 1">';
const RTL = 'file\u202etxt.exe';
const ZERO_WIDTH = 'zero\u200bwidth\u200d\ufeffjoin';
const ANSI = '\u001b]0;owned\u0007\u001b[2J\u001b[31mred\u001b[0m';
const HUGE = 'A'.repeat(1_000_000);

const system = (task: string) => ({ task_description: task, action_space: IMG, initial_state: RTL, demonstrations: '', simulation_instruction: ANSI });
/** JSON with `__proto__` / `constructor` as own keys (JSON.stringify of a literal would drop the first). */
const withProtoKeys = (json: string) => json.replace(/}$/, ',"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}');

const LINES = [
  JSON.stringify({
    id: `hostile-${IMG}`,
    domain: 'terminal',
    system_prompt: system(SCRIPT),
    turns: [
      { action: SCRIPT, observation: `${IMG}\n${RTL}\n${ZERO_WIDTH}\n${ANSI}` },
      { action: `echo ${ZERO_WIDTH}`, observation: `<b>not bold</b> &amp; <a href="javascript:window.__pwned=1">link</a>` },
    ],
    // Free-form metadata may hold any key; the schema allows no others.
    metadata: JSON.parse(withProtoKeys('{"note":"x"}')),
  }),
  JSON.stringify({ id: 'huge-line', domain: '<i>domain</i>', system_prompt: system('one megabyte'), turns: [{ action: 'cat big.log', observation: HUGE }] }),
  JSON.stringify({ id: '__proto__', domain: 'os', system_prompt: system(''), turns: [{ action: 'ls', observation: 'constructor toString __proto__' }] }),
];

async function expectNothingRan(page: Page) {
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  expect(await page.evaluate(() => ({}) as Record<string, unknown>).then((o) => o.polluted)).toBeUndefined();
  expect(await page.evaluate(() => 'polluted' in Object.prototype)).toBe(false);
  // None of the data became elements.
  expect(await page.locator('#root script, #root img[src="x"], #root b, #root a[href^="javascript"]').count()).toBe(0);
}

test('a dataset of hostile text is shown as text in every view, runs nothing and does not hang', async ({ page }) => {
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });

  await page.goto('./#/data');
  await expect(page.getByTestId('stats-table')).toBeVisible({ timeout: 120_000 });
  const name = `${IMG}.jsonl`;
  await page.getByTestId('import-input').setInputFiles({ name, mimeType: 'application/x-ndjson', buffer: Buffer.from(LINES.join('\n') + '\n') });
  await expect(page.getByTestId('import-result')).toContainText(`Imported 3 trajectories from ${name}`, { timeout: 60_000 });
  await expect(page.getByTestId('dataset-list')).toContainText(name);
  await expect(page.getByTestId('stats-table')).toContainText('<i>domain</i>');
  await expectNothingRan(page);

  // The list and each trajectory, as text.
  await page.getByRole('link', { name: 'Trajectories', exact: true }).click();
  const rows = page.getByTestId('trajectory-row');
  await expect(rows).toHaveCount(3, { timeout: 60_000 });
  await expect(rows.first()).toContainText(`hostile-${IMG}`);
  await rows.first().click();
  const detail = page.getByTestId('trajectory-detail');
  await expect(detail.getByRole('heading', { level: 2 })).toHaveText(`hostile-${IMG}`);
  await expect(detail.getByTestId('sp-task_description')).toContainText(SCRIPT);
  const turns = detail.getByTestId('turn');
  await expect(turns.nth(0).locator('pre.action')).toHaveText(SCRIPT);
  // Token colouring splits the text into pieces; together they are the observation, character for character.
  const observation = await turns
    .nth(0)
    .getByTestId('token-view')
    .evaluate((el) => el.textContent);
  expect(observation).toContain(IMG);
  expect(observation).toContain(RTL);
  expect(observation).toContain(ZERO_WIDTH);
  expect(observation).toContain(ANSI);
  await expect(turns.nth(1).getByTestId('token-view')).toContainText('<b>not bold</b> &amp; <a href="javascript:window.__pwned=1">link</a>');
  await expectNothingRan(page);
  await snap(page, 'hostile-trajectory');

  // The 1 MB line opens at once (its first characters) and shows in full on request.
  await rows.filter({ hasText: 'huge-line' }).click();
  await expect(detail.getByRole('heading', { level: 2 })).toHaveText('huge-line');
  const big = detail.getByTestId('turn').first().getByTestId('token-view');
  await expect(big).toContainText('AAAA');
  await detail.getByRole('button', { name: 'Show all 1,000,000 characters' }).click();
  await expect.poll(() => big.evaluate((el) => el.textContent?.length ?? 0), { timeout: 60_000 }).toBe(1_000_000);

  // The raw editor (Monaco) shows the JSON as text.
  await rows.first().click();
  await expect(detail.getByRole('heading', { level: 2 })).toHaveText(`hostile-${IMG}`);
  await detail.getByRole('link', { name: 'Edit as JSON' }).click();
  await expect(page.locator('.monaco-editor').first()).toBeVisible({ timeout: 120_000 });
  await expect(page.locator('.monaco-editor .view-lines').first()).toContainText('hostile-', { timeout: 60_000 });
  await expectNothingRan(page);

  // The Train view names the dataset (its file name) as text.
  await page.getByRole('link', { name: 'Train', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'Train', level: 1 })).toBeVisible({ timeout: 60_000 });
  await expectNothingRan(page);

  expect(dialogs).toEqual([]);
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});
