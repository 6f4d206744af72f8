// The Playground as a new user meets it, on a fresh browser profile: play the terminal
// environment with the copy-last baseline and with a micro checkpoint trained in the test; type
// `ls`, watch the observation come in beside the real one, read the five judge scores, the
// verifier's verdict and the reward; edit an earlier action and see the branch re-run; save the
// session and find it in Trajectories. Then the errors: an endpoint the browser cannot reach
// (CORS explained), a checkpoint file that is not ours.
import { expect, test, type Page } from '@playwright/test';
import { collectPageErrors, forbidForeignRequests, snap, trainMicroSft } from './helpers.ts';

async function openPlayground(page: Page) {
  await page.goto('./#/playground');
  await expect(page.getByRole('heading', { name: 'Playground', level: 1 })).toBeVisible();
}

/** Checks turn N: action, both observations, five scores, a verifier verdict, a reward. */
async function expectJudgedTurn(page: Page, n: number, action: string) {
  const turn = page.getByTestId(`turn-${n}`);
  await expect(turn.getByTestId('turn-action')).toHaveText(action);
  await expect(turn.getByLabel('Real observation')).not.toBeEmpty();
  await expect(turn.getByLabel('Predicted observation')).toBeVisible({ timeout: 240_000 });
  const scores = turn.getByRole('table', { name: 'Judge scores' });
  await expect(scores.locator('thead th')).toHaveText(['format', 'factuality', 'consistency', 'realism', 'quality', 'mean']);
  for (const cell of await scores.locator('tbody td.pg-score').all()) await expect(cell).toHaveText(/^[1-5]$/);
  await expect(turn.getByTestId('turn-verifier')).toContainText(/Verifier: (pass|fail|nothing deterministic to check)/);
  await expect(turn.getByTestId('turn-reward')).toContainText(/Reward \d+\.\d\d \/ 25/);
  return turn;
}

/** Edits turn 1's action, which re-runs the session from there as a new branch. */
async function branchFirstTurn(page: Page, action: string) {
  const before = await page.getByTestId('turn-1').getByLabel('Real observation').textContent();
  await page.getByRole('button', { name: 'Edit the action of turn 1' }).click();
  await page.getByLabel('New action for turn 1').fill(action);
  await page.getByRole('button', { name: 'Re-run from here' }).click();
  await expect(page.getByTestId('turn-1').getByTestId('turn-action')).toHaveText(action);
  await expect(page.getByRole('heading', { name: 'Branches' })).toBeVisible();
  await expect(page.getByText('before editing turn 1 (2 turns)')).toBeVisible();
  // The real environment replayed the new branch, and both turns were predicted and judged again.
  await expect(page.getByTestId('turn-1').getByLabel('Real observation')).not.toHaveText(before ?? '');
  await expectJudgedTurn(page, 1, action);
  await expectJudgedTurn(page, 2, 'pwd');
}

/** Saves the session and opens it in the Trajectories view. */
async function saveAndFind(page: Page, firstAction: string) {
  await page.getByRole('button', { name: 'Save session as a trajectory' }).click();
  const saved = page.getByTestId('pg-saved');
  await expect(saved).toContainText('into Playground sessions');
  const id = /Saved (play-terminal-\S+) into/.exec((await saved.textContent()) ?? '')![1];
  await saved.getByRole('link', { name: 'Open it in Trajectories' }).click();
  await expect(page).toHaveURL(new RegExp(`#/trajectories/${id}$`));
  await expect(page.getByText(id).first()).toBeVisible({ timeout: 60_000 });
  await expect(page.getByText(firstAction, { exact: true }).first()).toBeVisible();
  return id;
}

test('copy-last baseline on the terminal: observation beside the real one, judged; branch; save and find it in Trajectories', async ({ page }) => {
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await openPlayground(page);
  await page.getByLabel('Backend').selectOption('copy-last');
  await expect(page.getByLabel('World', { exact: true })).toHaveValue('terminal');
  // The action space sits beside the box; "Suggest" asks the scripted agent for a valid action.
  await expect(page.getByTestId('pg-action-space')).not.toBeEmpty();
  await page.getByRole('button', { name: 'Suggest' }).click();
  await expect(page.getByLabel('Action 1')).not.toHaveValue('');
  await page.getByLabel('Action 1').fill('ls');
  await page.getByRole('button', { name: 'Send' }).click();
  const t1 = await expectJudgedTurn(page, 1, 'ls');
  // copy-last answers turn 1 with the initial state.
  await expect(t1.getByTestId('turn-meta')).toContainText('copy-last · teacher forcing');
  await page.getByLabel('Action 2').fill('pwd');
  await page.getByLabel('Action 2').press('Enter');
  await expectJudgedTurn(page, 2, 'pwd');
  // Under teacher forcing copy-last repeats the real observation of turn 1.
  await expect(page.getByTestId('turn-2').getByLabel('Predicted observation')).toHaveText((await t1.getByLabel('Real observation').textContent()) ?? '');
  await expect(page.getByTestId('pg-summary')).toContainText('2 judged turns');
  await snap(page, 'playground-copy-last');
  // The session survives a reload (it lives in the browser), scores and all.
  await page.reload();
  await expectJudgedTurn(page, 2, 'pwd');
  await expect(page.getByLabel('Backend')).toHaveValue('copy-last');
  await branchFirstTurn(page, 'ls -a');
  await saveAndFind(page, 'ls -a');
  await snap(page, 'playground-saved-trajectory');
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});

test('a micro checkpoint trained here: streamed observation with tokens/s, context bar, judged, branch, saved', async ({ page }) => {
  test.setTimeout(900_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  // Train a tiny SFT run on the terminal domain, as the Train view's user would.
  await trainMicroSft(page, { tokens: 48, timeout: 600_000 });

  await page.getByRole('link', { name: 'Playground' }).click();
  await expect(page.getByRole('heading', { name: 'Playground', level: 1 })).toBeVisible();
  const backend = page.getByLabel('Backend');
  const option = backend.locator('option', { hasText: /SFT .* step 4/ }).first();
  await backend.selectOption({ label: (await option.textContent())! });
  // Trained on 48-token rows: its context is 48, the positions it learned.
  await expect(page.getByTestId('pg-model')).toContainText(/Loaded on the GPU: local:sft-4 .* context 48 tokens .* trained template/, { timeout: 120_000 });
  await page.getByLabel('Max tokens').fill('12');
  await page.getByLabel('Action 1').fill('ls');
  await page.getByRole('button', { name: 'Send' }).click();
  // The observation streams in: the live box with its token rate, then the finished turn.
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
  const t1 = await expectJudgedTurn(page, 1, 'ls');
  console.log(`[e2e] live stream seen: ${sawStream}`);
  await expect(t1.getByTestId('turn-meta')).toContainText(/local:sft-4 · teacher forcing · \d+ tokens? · [\d.]+ tokens\/s/);
  // The context bar: exact counts against the model’s 48 tokens, and what the policy cut to fit.
  await expect(page.getByTestId('context-bar')).toContainText('context 48');
  await expect(page.getByTestId('context-cut')).toContainText(/The prompt needs \d+ tokens; 36 fit \(context 48 − 12 max tokens\)/);
  await page.getByLabel('Action 2').fill('pwd');
  await page.getByRole('button', { name: 'Send' }).click();
  await expectJudgedTurn(page, 2, 'pwd');
  await page.getByRole('heading', { name: 'Playground', level: 1 }).scrollIntoViewIfNeeded();
  await snap(page, 'playground-checkpoint');
  await branchFirstTurn(page, 'ls -la');
  await expect(page.getByTestId('turn-1').getByTestId('turn-meta')).toContainText('local:sft-4');
  // Free running: the model is fed its own predictions.
  await page.getByLabel(/Free running/).check();
  await page.getByRole('button', { name: 'Re-run all turns this way' }).click();
  await expect(page.getByTestId('turn-2').getByTestId('turn-meta')).toContainText('free running', { timeout: 240_000 });
  await snap(page, 'playground');
  await saveAndFind(page, 'ls -la');
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});

test('errors: an endpoint the browser cannot reach explains CORS and keeps the session; a file that is not our checkpoint says why', async ({ page }) => {
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await openPlayground(page);
  await page.getByLabel('Backend').selectOption('new-endpoint');
  await page.getByLabel('Base URL').fill('http://127.0.0.1:9/v1');
  await page.getByLabel('Model name').fill('qwen');
  await page.getByLabel('API key').fill('sk-never-stored');
  await page.getByRole('button', { name: 'Use this endpoint' }).click();
  await expect(page.getByText('key in memory only')).toBeVisible();
  await page.getByLabel('Action 1').fill('ls');
  await page.getByRole('button', { name: 'Send' }).click();
  const alert = page.getByTestId('pg-error');
  await expect(alert).toContainText('The endpoint is blocked (CORS) or down', { timeout: 60_000 });
  await expect(alert).toContainText('What CORS is');
  await expect(alert).toContainText('--allowed-origins');
  await expect(alert).toContainText('OLLAMA_ORIGINS=');
  // The turn is kept with its real observation, ready to run again.
  await expect(page.getByTestId('turn-1').getByLabel('Real observation')).not.toBeEmpty();
  await expect(page.getByTestId('turn-1').getByRole('button', { name: 'Run turn 1 again' })).toBeVisible();
  // The key is in memory only: not in localStorage, nor in the persisted session or settings.
  const stored = await page.evaluate(() => JSON.stringify(Object.entries(localStorage)));
  expect(stored).not.toContain('sk-never-stored');
  expect(stored).toContain('127.0.0.1:9');

  // A checkpoint file from elsewhere (a Hugging Face GPT-2 without our metadata).
  await page.getByLabel('Open a checkpoint file').setInputFiles('src/model/fixtures/hf-gpt2-tiny.safetensors');
  await expect(alert).toContainText('This checkpoint cannot be run', { timeout: 120_000 });
  await expect(alert).toContainText('hf-gpt2-tiny.safetensors is not an LWM Studio checkpoint');
  await expect(page.getByTestId('pg-model')).toHaveText('Not loaded: see the message above.');
  await snap(page, 'playground-errors');
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});
