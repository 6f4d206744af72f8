// The Bench when a backend cannot run, as a person meets it: in a browser without WebGPU the
// baselines and the local judge still run (the reference scores highest) and a stored checkpoint
// is shown as unavailable with the reason; an endpoint at a port where nothing listens fails on
// its own row, which says what CORS is and how to start vLLM, Ollama or SGLang with this page's
// origin allowed, while the other backend finishes.
import { expect, test, type Page } from '@playwright/test';
import { collectPageErrors, snap } from './helpers.ts';

/** The Bench with the default dataset loaded, and only `domains` chosen. */
async function openBench(page: Page, domains: string[]) {
  await page.goto('./#/bench');
  await expect(page.getByRole('heading', { name: 'Bench', level: 1 })).toBeVisible();
  await expect(page.getByLabel('Dataset', { exact: true })).toContainText('Default dataset', { timeout: 120_000 });
  for (const box of await page.getByRole('group', { name: 'Domains' }).getByRole('checkbox').all()) {
    const name = ((await box.locator('xpath=..').textContent()) ?? '').trim();
    if (!domains.includes(name)) await box.uncheck();
  }
  await page.getByLabel('Samples per domain').fill('2');
}

/** The overall total of a backend's row in the table. */
async function overallTotal(page: Page, backend: string): Promise<number> {
  const cell = page.getByTestId('bench-table').locator(`tbody[data-domain="overall"] tr[data-backend="${backend}"] td[data-col="total"]`);
  return Number(await cell.textContent());
}

test('Bench without WebGPU: the baselines run with the local judge, a checkpoint is unavailable with the reason', async ({ page }) => {
  test.setTimeout(300_000);
  const errors = collectPageErrors(page);
  await page.addInitScript(() => {
    delete (Navigator.prototype as { gpu?: unknown }).gpu;
  });
  await openBench(page, ['terminal', 'mcp', 'search']);
  expect(await page.evaluate(() => 'gpu' in navigator)).toBe(false);
  // A stored checkpoint (as a training run on another device would leave), to see how it is offered here.
  await page.evaluate(
    () =>
      new Promise<void>((resolve, reject) => {
        const open = indexedDB.open('lwm-studio');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction('runs', 'readwrite');
          const now = Date.now();
          tx.objectStore('runs').put({
            id: 'run-seeded',
            name: 'Seeded SFT',
            createdAt: now,
            updatedAt: now,
            stage: 'sft',
            spec: {},
            data: { datasetId: null, name: 'x', trajectories: 1 },
            from: null,
            state: 'done',
            step: 4,
            checkpoints: { last: { key: 'ck-seeded', step: 4, size: 1, createdAt: now } },
            resumes: [],
          });
          tx.oncomplete = () => (open.result.close(), resolve());
          tx.onerror = () => reject(tx.error);
        };
      }),
  );
  await page.reload();
  await openBench(page, ['terminal', 'mcp', 'search']);
  const backends = page.getByRole('group', { name: 'Backends' });
  await expect(page.getByTestId('bench-checkpoints-unavailable')).toContainText('navigator.gpu is missing');
  await expect(backends.getByRole('checkbox', { name: /Seeded SFT · last · step 4/ })).toBeDisabled();
  await expect(backends.getByRole('checkbox', { name: /^copy-last/ })).toBeChecked();
  await expect(backends.getByRole('checkbox', { name: /^reference/ })).toBeChecked();
  await page.getByRole('button', { name: 'Run benchmark' }).click();
  await expect(page.getByTestId('bench-error')).toHaveCount(0);

  await expect(page.getByTestId('bench-table')).toBeVisible({ timeout: 120_000 });
  await expect(page.getByTestId('bench-progress')).toHaveCount(0, { timeout: 120_000 });
  await expect(page.getByTestId('bench-list').locator('.pill')).toHaveText('done');
  expect(await overallTotal(page, 'reference')).toBeGreaterThan(await overallTotal(page, 'copy-last'));
  await expect(page.getByTestId('bench-backend-problems')).toHaveCount(0);
  await snap(page, 'bench-no-webgpu');
  expect(errors).toEqual([]);
});

test('Bench: an endpoint where nothing listens fails on its own row with what CORS is and how to allow this page; copy-last finishes', async ({ page }) => {
  test.setTimeout(300_000);
  const errors = collectPageErrors(page);
  await openBench(page, ['terminal']);
  await page.getByRole('checkbox', { name: /^reference/ }).uncheck();
  await page.getByRole('button', { name: 'Add an OpenAI-compatible endpoint' }).click();
  const form = page.getByRole('form', { name: 'New endpoint' });
  await form.getByLabel('Base URL').fill('http://127.0.0.1:9/v1');
  await form.getByLabel('Model name').fill('nobody-home');
  await form.getByRole('button', { name: 'Add endpoint' }).click();
  await expect(page.getByRole('group', { name: 'Backends' }).getByRole('checkbox', { name: /endpoint:nobody-home/ })).toBeChecked();
  await page.getByLabel('Max new tokens').fill('8');
  await page.getByRole('button', { name: 'Run benchmark' }).click();

  const origin = new URL(page.url()).origin;
  const problem = page.getByTestId('bench-backend-problem');
  await expect(problem).toHaveCount(1, { timeout: 120_000 });
  await expect(problem).toHaveAttribute('data-backend', 'endpoint:nobody-home');
  await expect(problem).toContainText('http://127.0.0.1:9/v1/chat/completions');
  await expect(problem).toContainText('What CORS is');
  await expect(problem).toContainText(`--allowed-origins '["${origin}"]'`);
  await expect(problem).toContainText(`OLLAMA_ORIGINS=${origin} ollama serve`);
  await expect(problem).toContainText('sglang.launch_server');
  // The run went on: copy-last is scored, and the bench says which backend could not run.
  await expect(page.getByTestId('bench-table').locator('tr[data-backend="copy-last"]').first()).toBeVisible();
  await expect(page.getByTestId('bench-selected').getByRole('alert').first()).toContainText('endpoint:nobody-home could not run');
  await expect(page.getByRole('button', { name: 'Try again (keeps what was done)' })).toBeVisible();
  await snap(page, 'bench-endpoint-cors');
  expect(errors).toEqual([]);
});
