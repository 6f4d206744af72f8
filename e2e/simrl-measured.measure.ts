// A measured Sim RL experiment in the browser, for the README's picture of one (not part of
// `npm test`: it trains for about 17 minutes on a CPU-emulated adapter). Run it with
// `npm run screenshots -- --config playwright.measure.config.ts`; it writes
// docs/screenshots/train-simrl-measured.png and prints each arm's results.
// Terminal write_word, the bench policy, 300 imitation steps (a policy that solves about a third
// of the held-out tasks, leaving RL room above it), 20 RL steps of 8 tasks × 8 episodes per arm
// at temperature 0.5 with a 5-step warm-up, 32 held-out tasks evaluated every 5 steps, the
// copy-last world model, the shuffled-reward control ticked beside the four agents.
import { expect, test } from '@playwright/test';
import { collectPageErrors, docScreenshotPath, expectNoPageErrors, forbidForeignRequests } from './helpers.ts';

test('Sim RL, measured: four agents and the control on 32 held-out write_word tasks', async ({ page }) => {
  test.setTimeout(3 * 3600_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await page.goto('./#/train');
  await page.getByRole('radio', { name: /^Custom run/ }).check();
  const form = page.getByTestId('simrl-form');
  await form.getByLabel('Experiment name').fill('write_word, 300 imitation steps');
  await form.getByRole('group', { name: 'Agents' }).getByRole('checkbox', { name: 'RL in the real environment, rewards shuffled (control)' }).check();
  await form.getByLabel('Policy model').selectOption('bench');
  await expect(form.getByLabel('World model', { exact: true })).toHaveValue('copy-last');
  const fields: [string, string][] = [
    ['Held-out tasks', '32'],
    ['Imitation steps', '300'],
    ['RL steps per arm', '20'],
    ['Held-out evaluation every', '5'],
    ['Tasks per RL step', '8'],
    ['Episodes per group', '8'],
    ['RL learning rate', '3e-4'],
    ['RL warm-up steps', '5'],
    ['Rollout temperature', '0.5'],
  ];
  for (const [label, value] of fields) await form.getByLabel(label, { exact: true }).fill(value);
  await form.getByRole('button', { name: 'Start experiment' }).click();
  const card = page.getByTestId('simrl-experiment');
  await expect(card.getByTestId('simrl-status')).toContainText('done · finished', { timeout: 3 * 3600_000 });
  const rows = await card.getByTestId('simrl-results').locator('tr').allInnerTexts();
  console.log(`[measured] results:\n${rows.join('\n')}`);
  await page.setViewportSize({ width: 1280, height: 1100 });
  await card.screenshot({ path: docScreenshotPath('train-simrl-measured') });
  expect(foreign).toEqual([]);
  await expectNoPageErrors(page, errors);
});
