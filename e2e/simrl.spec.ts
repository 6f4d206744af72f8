// The Sim RL panel (Train view) as a person uses it, in real Chromium (SwiftShader in CI), with
// tiny shapes: the micro preset, T 64, 3 imitation steps, 2 RL steps per arm evaluated after each
// on 4 held-out tasks, a world model behind an OpenAI-compatible endpoint on 127.0.0.1 (as `lwm
// serve` serves one), added in the panel with a key kept in memory and typed again on resume, its
// replies streamed. Start the four-agent experiment, see the
// untrained agent's point and the curves appear, reload mid-run and resume it from its last stored
// evaluation, see it finish with every arm's result (the shuffled-reward control ticked by hand
// beside the four agents), then find it in System → Browser storage and delete it there.
import { expect, test, type Page } from '@playwright/test';
import { ARTIFACTS, chatLlamaCopy, chatServer, collectPageErrors, docScreenshotPath, expectNoPageErrors, forbidForeignRequests, snap } from './helpers.ts';

/**
 * A world model behind an OpenAI-compatible endpoint that lets the page in (CORS): it answers every
 * turn with the action it was sent (streamed when asked), and records each request's Authorization header.
 */
async function worldEndpoint() {
  const auth = new Set<string>();
  let requests = 0;
  const server = await chatServer((body, req) => {
    requests++;
    auth.add(String(req.headers.authorization));
    return body.messages.at(-1)!.content.slice(0, 40);
  });
  return { ...server, auth, requests: () => requests };
}

let closeWorld: (() => Promise<void>) | null = null;
test.afterEach(async () => {
  await closeWorld?.();
  closeWorld = null;
});

async function openTrain(page: Page) {
  await page.goto('./#/train');
  await expect(page.getByRole('heading', { name: 'Train', level: 1 })).toBeVisible();
  // The custom form: the quick recipe's form times a training step by itself, which would hold the worker.
  await page.getByRole('radio', { name: /^Custom run/ }).check();
}

test('Sim RL: four agents’ curves, resumed after a reload, finished, listed and deleted in browser storage', async ({ page }) => {
  test.setTimeout(600_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  const world = await worldEndpoint();
  closeWorld = world.close;
  await openTrain(page);
  const form = page.getByTestId('simrl-form');
  await expect(form.getByLabel('Task domain')).toHaveValue('terminal');
  await expect(form.getByRole('group', { name: 'Agents' }).getByRole('checkbox', { checked: true })).toHaveCount(4);

  // Inputs meet clear errors: no family, bad numbers.
  await form.getByRole('group', { name: 'Task families' }).getByRole('checkbox', { checked: true }).uncheck();
  await form.getByLabel('RL steps per arm').fill('0');
  await form.getByLabel('Episodes per group').fill('x');
  await form.getByLabel('RL learning rate').fill('fast');
  await form.getByRole('button', { name: 'Start experiment' }).click();
  await expect(form).toContainText('Task families: pick at least one of');
  await expect(form).toContainText("RL steps per arm: a whole number ≥ 1, not '0'.");
  await expect(form).toContainText("Episodes per group: a whole number ≥ 2, not 'x'.");
  await expect(form).toContainText("RL learning rate: a number such as 0.0003, not 'fast'.");
  await expect(page.getByTestId('simrl-experiment')).toHaveCount(0);
  // A family the world model cannot reward (no simulated check) is marked, and named before anything runs.
  await form.getByLabel('Task domain').selectOption('mcp');
  // The families' error was about terminal's: it goes with the change.
  await expect(form).not.toContainText('Task families: pick at least one of');
  await expect(form).toContainText("RL steps per arm: a whole number ≥ 1, not '0'.");
  const families = form.getByRole('group', { name: 'Task families' });
  await expect(families.getByRole('checkbox', { name: 'write_file', exact: true })).toBeChecked();
  // The tool server's JSON-RPC calls need a larger action budget and context: picking mcp brings them.
  const actionTokens = form.getByLabel('Action tokens');
  const context = form.getByLabel('Policy context (T)');
  await expect(actionTokens).toHaveValue('42');
  await expect(context).toHaveValue('96');
  // So do the imitation steps: a fresh policy learns to copy write_file's path and text late.
  const imitation = form.getByLabel('Imitation steps');
  await expect(imitation).toHaveValue('2000');
  await families.getByRole('checkbox', { name: 'add_event', exact: true }).check();
  await expect(actionTokens).toHaveValue('51');
  await expect(context).toHaveValue('128');
  await families.getByRole('checkbox', { name: 'add_event', exact: true }).uncheck();
  await expect(actionTokens).toHaveValue('42');
  await families.getByRole('checkbox', { name: 'add_todo (no simulated check)' }).check();
  await form.getByRole('button', { name: 'Start experiment' }).click();
  await expect(form).toContainText(
    "Task families: add_todo has no simulated check, so the world-model agents cannot be rewarded on it; mcp's families with one: write_file, add_event.",
  );
  await expect(page.getByTestId('simrl-experiment')).toHaveCount(0);
  // Without the world-model agents the family needs no simulated check: its mark and its error go.
  const arms = form.getByRole('group', { name: 'Agents' });
  for (const name of ['RL in the world model', 'RL in the world model, then in the real environment'])
    await arms.getByRole('checkbox', { name, exact: true }).uncheck();
  await expect(families.getByRole('checkbox', { name: 'add_todo', exact: true })).toBeChecked();
  await expect(form).not.toContainText('has no simulated check');
  // A budget typed too small is refused before anything runs, with what the families need.
  await actionTokens.fill('12');
  await form.getByRole('button', { name: 'Start experiment' }).click();
  await expect(form).toContainText("Action tokens: at least 42, the tokens of write_file's longest action to imitate.");
  await expect(page.getByTestId('simrl-experiment')).toHaveCount(0);
  await snap(page, 'simrl-budget-error');
  // A typed budget stays when the domain changes; the context, not typed, follows it back.
  await actionTokens.fill('16');
  await expect(form).not.toContainText('Action tokens: at least');
  for (const name of ['RL in the world model', 'RL in the world model, then in the real environment'])
    await arms.getByRole('checkbox', { name, exact: true }).check();
  await form.getByLabel('Task domain').selectOption('terminal');
  await expect(actionTokens).toHaveValue('16');
  await expect(context).toHaveValue('64');
  await expect(imitation).toHaveValue('400');

  // The tiny experiment.
  await form.getByRole('group', { name: 'Task families' }).getByRole('checkbox').first().check();
  await form.getByLabel('Experiment name').fill('Tiny Sim RL');
  // The shuffled-reward control is asked for by hand.
  await form.getByRole('group', { name: 'Agents' }).getByRole('checkbox', { name: 'RL in the real environment, rewards shuffled (control)' }).check();
  await form.getByLabel('Policy model').selectOption('micro');
  await expect(form.getByLabel('World model', { exact: true })).toHaveValue('copy-last');
  // The world model: an endpoint added here, its key kept in this page's memory only.
  await form.getByLabel('World model', { exact: true }).selectOption('Add an endpoint…');
  const added = form.getByRole('form', { name: 'World model: new endpoint' });
  await added.getByLabel('Base URL').fill(world.base);
  await added.getByLabel('Model name').fill('world');
  await added.getByLabel('API key').fill('sk-world');
  await snap(page, 'simrl-world-endpoint');
  await added.getByRole('button', { name: 'Use this endpoint' }).click();
  await expect(added).toHaveCount(0);
  await expect(form.getByLabel('World model', { exact: true }).locator('option:checked')).toHaveText(`world at ${world.base} (key in memory only)`);
  const fields: [string, string][] = [
    ['Policy context (T)', '64'],
    ['Action tokens', '12'],
    ['Train tasks', '8'],
    ['Held-out tasks', '4'],
    ['Imitation steps', '3'],
    ['RL steps per arm', '2'],
    ['Held-out evaluation every', '2'],
    ['Rows per update', '2'],
    ['Episodes per group', '2'],
    ['Tasks per RL step', '1'],
    ['World model answer tokens', '16'],
    ['RL learning rate', '3e-4'],
    ['Rollout temperature', '0.7'],
  ];
  for (const [label, value] of fields) await form.getByLabel(label, { exact: true }).fill(value);
  await form.getByRole('button', { name: 'Start experiment' }).click();

  const card = page.getByTestId('simrl-experiment');
  await expect(card.getByRole('heading', { name: 'Tiny Sim RL' })).toBeVisible();
  // The untrained agent's evaluation is stored and drawn as the reference line.
  await expect(card.getByTestId('simrl-status')).toContainText('imitation (3 SFT steps)', { timeout: 240_000 });
  await expect(card.getByTestId('simrl-chart')).toContainText('untrained');

  // Reload mid-run: the experiment is offered to resume from its last stored evaluation.
  await page.reload();
  const offer = page.getByTestId('simrl-resume-offer');
  await expect(offer).toContainText('Tiny Sim RL was running when the page closed', { timeout: 30_000 });
  // The key went with the page's memory: the resume asks for it again.
  await offer.getByLabel(`API key for the world model (world at ${world.base})`).fill('sk-world');
  await offer.screenshot({ path: `${ARTIFACTS}/simrl-resume-key.png` });
  await offer.getByRole('button', { name: 'Resume experiment' }).click();
  await expect(offer).toHaveCount(0);
  await expect(card.getByTestId('simrl-status')).toContainText('running');

  // It finishes: four curves, every arm's final success, p-values and the model arm's sim-to-real gap.
  await expect(card.getByTestId('simrl-status')).toContainText('done · finished', { timeout: 420_000 });
  const chart = card.getByTestId('simrl-chart');
  for (const label of [
    'untrained by RL (imitation only)',
    'RL in the real environment',
    'RL in the world model',
    'RL in the world model, then in the real environment',
    'RL in the real environment, rewards shuffled (control)',
  ])
    await expect(chart).toContainText(label);
  await expect(card).toContainText(`world model world at ${world.base}`);
  // Every simulated turn went to the endpoint with the key, before the reload and after it.
  expect(world.requests()).toBeGreaterThan(0);
  expect([...world.auth]).toEqual(['Bearer sk-world']);
  const results = card.getByTestId('simrl-results');
  // Columns: agent, final success (greedy), sampled, p vs untrained, p vs imitation, p vs the control (greedy / sampled), sim-to-real gap.
  for (const arm of ['imitation', 'real', 'shuffled', 'model', 'model-real']) {
    await expect(results.locator(`tr[data-arm="${arm}"] td`).nth(1)).toHaveText(/^\d+% \(\d\/4\)$/);
    await expect(results.locator(`tr[data-arm="${arm}"] td`).nth(2)).toHaveText(/^\d+% \(\d\/4\)$/);
  }
  const P = '(\\d\\.\\d{3}|\\d\\.\\de-\\d+)';
  await expect(results.locator('tr[data-arm="model"] td').nth(6)).toHaveText(/^\d+% of \d+$/);
  await expect(results.locator('tr[data-arm="real"] td').nth(6)).toHaveText('—');
  await expect(results.locator('tr[data-arm="real"] td').nth(3)).toHaveText(new RegExp(`^${P}$`));
  await expect(results.locator('tr[data-arm="real"] td').nth(5)).toHaveText(new RegExp(`^${P} / ${P}$`));
  await expect(results.locator('tr[data-arm="shuffled"] td').nth(5)).toHaveText('—');
  // Tall enough for the whole card: the sticky header would otherwise cover its top in the picture.
  await page.setViewportSize({ width: 1280, height: 1100 });
  await card.screenshot({ path: docScreenshotPath('train-simrl') });
  await page.setViewportSize({ width: 1280, height: 800 });
  // The curves of the sampled episodes (what RL trains), and back.
  await card.getByRole('radio', { name: /actions sampled at temperature 0\.7 / }).check();
  await expect(chart).toContainText('sampled actions');
  for (const label of ['RL in the real environment', 'RL in the world model']) await expect(chart).toContainText(label);
  await card.getByRole('radio', { name: 'greedy actions' }).check();
  await expect(chart).toContainText('greedy actions');

  // Browser storage lists it as its own kind, and deletes it.
  await page.goto('./#/system');
  const storage = page.getByRole('article', { name: 'Browser storage' });
  const row = storage.getByTestId('storage-table').locator('tr[data-kind="experiments"]');
  await expect(row).toContainText('Sim RL experiments');
  await storage.getByRole('button', { name: 'Show Sim RL experiments' }).click();
  await storage.getByRole('button', { name: 'Delete Sim RL experiment Tiny Sim RL' }).click();
  await page.getByRole('dialog', { name: 'Delete this Sim RL experiment?' }).getByRole('button', { name: 'Delete Sim RL experiment' }).click();
  await expect(storage.getByRole('button', { name: /^(Show|Hide) sim rl experiments$/i })).toHaveCount(0);
  await expect(storage.getByRole('button', { name: 'Delete Sim RL experiment Tiny Sim RL' })).toHaveCount(0);
  await page.goto('./#/train');
  await expect(page.getByTestId('simrl-experiment')).toHaveCount(0);

  expect(foreign).toEqual([]);
  await expectNoPageErrors(page, errors);
});

test('Sim RL with a Hugging Face policy: a LoRA adapter on the picked folder, cut by a reload, the folder picked again, finished', async ({ page }) => {
  test.setTimeout(600_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await openTrain(page);
  const form = page.getByTestId('simrl-form');
  await form.getByLabel('Policy model').selectOption({ label: 'Hugging Face folder…' });
  await form.getByLabel('LoRA rank').fill('two');
  await form.getByRole('button', { name: 'Start experiment' }).click();
  await expect(form).toContainText('Hugging Face folder: pick the model folder');
  await expect(form).toContainText("LoRA rank: a whole number from 1 to 4096, or blank to fine-tune every weight; not 'two'.");
  await form.getByLabel("Open the policy's Hugging Face folder").setInputFiles(chatLlamaCopy('ChatPolicy', ['generate.json']));
  await expect(form.getByTestId('simrl-hf-folder')).toContainText('ChatPolicy');
  await form.getByLabel('LoRA rank').fill('2');
  await form.scrollIntoViewIfNeeded();
  await snap(page, 'simrl-hf-form');
  // Two agents, no world model: imitation only, and RL in the real environment.
  const agents = form.getByRole('group', { name: 'Agents' });
  await agents.getByRole('checkbox', { name: 'RL in the world model', exact: true }).uncheck();
  await agents.getByRole('checkbox', { name: 'RL in the world model, then in the real environment' }).uncheck();
  await form.getByLabel('Experiment name').fill('Chat policy');
  const fields: [string, string][] = [
    ['Policy context (T)', '96'],
    ['Action tokens', '20'],
    ['Train tasks', '4'],
    ['Held-out tasks', '1'],
    ['Imitation steps', '2'],
    ['RL steps per arm', '2'],
    ['Held-out evaluation every', '1'],
    ['Rows per update', '2'],
    ['Episodes per group', '2'],
    ['Tasks per RL step', '1'],
  ];
  for (const [label, value] of fields) await form.getByLabel(label, { exact: true }).fill(value);
  await form.getByRole('button', { name: 'Start experiment' }).click();

  const card = page.getByTestId('simrl-experiment');
  await expect(card.getByRole('heading', { name: 'Chat policy' })).toBeVisible();
  await expect(card.getByTestId('simrl-status')).toContainText('ChatPolicy (LoRA rank 2), T 96');
  await expect(card.getByTestId('simrl-status')).toContainText('real: 1 of 2 RL steps stored', { timeout: 300_000 });

  // A reload: the page no longer holds the folder, so resuming asks for it again.
  await page.reload();
  const offer = page.getByTestId('simrl-resume-offer');
  await expect(offer).toContainText('Chat policy was running when the page closed', { timeout: 30_000 });
  await snap(page, 'simrl-hf-resume');
  await offer.getByLabel('Resume experiment: pick ChatPolicy again').setInputFiles(chatLlamaCopy('ChatPolicy', ['generate.json']));
  await expect(offer).toHaveCount(0);
  await expect(card.getByTestId('simrl-status')).toContainText('done · finished', { timeout: 300_000 });
  const results = card.getByTestId('simrl-results');
  for (const arm of ['imitation', 'real']) await expect(results.locator(`tr[data-arm="${arm}"] td`).nth(1)).toHaveText(/^\d+% \(\d\/1\)$/);
  await card.screenshot({ path: 'e2e/artifacts/simrl-hf-done.png' });

  expect(foreign).toEqual([]);
  await expectNoPageErrors(page, errors);
});
