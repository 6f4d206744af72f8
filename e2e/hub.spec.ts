// A model from the Hugging Face Hub by its id, as a person meets it in the Playground, against the
// mock Hub of the tests (src/hub/testing.ts) on 127.0.0.1: the page is pointed at it with the
// test-only localStorage key of src/app/lib/hubEndpoint.ts (a loopback address alone; no test
// reaches huggingface.co). A malformed id, an unknown repo, a gated one and a network failure each
// get their message; then `org/tiny` (the tiny chat Llama) downloads with its bytes per file
// shown, loads and plays one turn; after a reload (the Hub out of reach) the same id loads from the
// browser's cache with no request to the Hub; the System view's Browser storage card lists it by
// id with its size, and deleting it there empties the cache.
import { fileURLToPath } from 'node:url';
import { expect, test, type Page } from '@playwright/test';
import { folderFiles, startMockHub, type MockHub } from '../src/hub/testing.ts';
import { formatBytes } from '../src/storage/quota.ts';
import { collectPageErrors, docScreenshotPath, forbidForeignRequests } from './helpers.ts';

const tiny = folderFiles(fileURLToPath(new URL('../src/model/fixtures/hf/llama-chat', import.meta.url)), { skip: ['generate.json'] });
let hub: MockHub;

test.beforeAll(async () => {
  hub = await startMockHub([
    { repo: 'org/tiny', refs: { main: 0 }, commits: [tiny] },
    { repo: 'org/gated', refs: { main: 0 }, commits: [tiny], gatedToken: 'hf_e2e_token' },
  ]);
});
test.afterAll(() => hub?.close());

async function fetchId(page: Page, id: string) {
  const field = page.getByTestId('pg-hub');
  await field.getByLabel('From the Hub').fill(id);
  await field.getByRole('button', { name: 'Fetch' }).click();
}

test('a Hub id: errors, a download with progress, one turn, then the cache after a reload with the Hub out of reach, listed and deleted in Browser storage', async ({
  page,
}) => {
  test.setTimeout(600_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await page.addInitScript((endpoint) => localStorage.setItem('lwm.test.hubEndpoint', endpoint), hub.endpoint);
  await page.goto('./#/playground');
  await expect(page.getByRole('heading', { name: 'Playground', level: 1 })).toBeVisible();
  const error = page.getByTestId('pg-hub-error');

  await fetchId(page, 'not an id');
  await expect(error).toHaveText(/'not an id' is not a Hugging Face model id: write org\/name or org\/name@revision/);
  await fetchId(page, 'org/nothing');
  await expect(error).toHaveText(
    `org/nothing: no such model on ${hub.endpoint}: check the id (org/name, as on the model's page); if it is private or gated, add an access token.`,
  );
  await fetchId(page, 'org/gated');
  await expect(error).toContainText('org/gated: the model is gated or private: add a Hugging Face access token');
  // The network down: the page's requests to the Hub fail.
  await page.route(`${hub.endpoint}/**`, (r) => r.abort('internetdisconnected'));
  await fetchId(page, 'org/tiny');
  await expect(error).toContainText(`org/tiny: cannot reach the Hugging Face Hub at ${hub.endpoint} (a network failure)`);
  await page.unroute(`${hub.endpoint}/**`);

  hub.requests.length = 0;
  await fetchId(page, 'org/tiny');
  const progress = page.getByTestId('pg-hub-progress');
  await expect(page.getByTestId('pg-hub-status')).toContainText('org/tiny: downloaded and checked.', { timeout: 60_000 });
  await expect(error).toHaveCount(0);
  for (const [path, bytes] of Object.entries(tiny))
    await expect(progress.locator(`[data-path="${path}"]`)).toContainText(`${formatBytes(bytes.length)} of ${formatBytes(bytes.length)}`);
  expect(hub.requests.some((r) => r.server === 'cdn' && r.method === 'GET' && r.path.startsWith('/lfs/org/tiny/'))).toBe(true);
  const info = page.getByTestId('hf-folder-info');
  await expect(info).toContainText(/LlamaForCausalLM, [\d.]+K parameters \(2 layers × 32/, { timeout: 120_000 });
  await expect(info).toContainText('tokenizer and chat template');
  await page.getByTestId('pg-hub').scrollIntoViewIfNeeded();
  await page.getByTestId('pg-hf').screenshot({ path: docScreenshotPath('playground-hub') });

  await page.getByRole('button', { name: 'Load in the Playground' }).click();
  await expect(page.getByTestId('pg-model')).toContainText(/Loaded on the GPU: hf:.*LlamaForCausalLM · 2 layers × 32/, { timeout: 120_000 });
  await page.getByLabel('Max tokens').fill('8');
  await page.getByLabel('Action 1').fill('ls');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByTestId('turn-1').getByLabel('Predicted observation')).toBeVisible({ timeout: 300_000 });
  await expect(page.getByTestId('turn-1').getByTestId('turn-meta')).toContainText(/\d+ tokens? · [\d.]+ tokens\/s/);

  // Reload, the Hub out of reach: the same id comes from the cache with no request to the Hub.
  // (The page's own server stays up: the worker's script is loaded from it.)
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Playground', level: 1 })).toBeVisible();
  hub.requests.length = 0;
  await page.route(`${hub.endpoint}/**`, (r) => r.abort('internetdisconnected'));
  await fetchId(page, 'org/tiny');
  await expect(page.getByTestId('pg-hub-status')).toContainText("org/tiny: loaded from this browser's cache, nothing downloaded.");
  await expect(page.getByTestId('hf-folder-info')).toContainText(/LlamaForCausalLM/, { timeout: 120_000 });
  await page.unroute(`${hub.endpoint}/**`);
  expect(hub.requests).toEqual([]);

  // Browser storage: listed by its id and revision, with its size (the files, the ref and the snapshot's links); deleted.
  const commit = hub.commit('org/tiny', 0);
  const links = Object.entries(tiny).reduce((n, [p]) => n + (p.endsWith('.safetensors') ? 64 : 40), 0);
  const bytes = Object.values(tiny).reduce((n, b) => n + b.length, 0) + 40 + links;
  await page.goto('./#/system');
  const card = page.getByRole('article', { name: 'Browser storage' });
  await card.getByRole('button', { name: 'Show cached models and files' }).click();
  const row = card.locator('tr[data-item="cache:lwm-hub:models--org--tiny"]');
  await expect(row).toContainText(`org/tiny · Hugging Face Hub model, revision main (${commit.slice(0, 7)})`);
  await expect(row).toContainText(formatBytes(bytes));
  // The ids the Hub did not give left no cache behind.
  expect(await page.evaluate(() => caches.keys())).toEqual(['lwm-hub:models--org--tiny']);
  await card.screenshot({ path: docScreenshotPath('system-storage-hub') });
  await row.getByRole('button', { name: 'Delete cache org/tiny' }).click();
  await page.getByRole('dialog', { name: 'Delete this cache?' }).getByRole('button', { name: 'Delete cache' }).click();
  await expect(row).toHaveCount(0);
  expect(await page.evaluate(() => caches.keys())).toEqual([]);
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});
