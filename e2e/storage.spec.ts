// Browser storage as a person meets it: the System view's Storage card shows each kind of stored
// thing with its size (a dataset, runs, their checkpoints, a Cache Storage cache as a model cache
// would be); deleting a run after the confirmation removes it and its checkpoints, and the sizes
// drop; deleting a dataset names the run that used it, which stays. With
// a small quota (the page's navigator.storage.estimate answering so), starting a bench or a
// training run first warns; "Free space" opens the Storage card, "Start anyway" starts the job.
import { expect, test, type Page } from '@playwright/test';
import { collectPageErrors, docScreenshotPath, forbidForeignRequests, snap } from './helpers.ts';

const MiB = 1024 * 1024;

/** Two runs with checkpoints (A: 3 + 2 MiB, B: 1 MiB) and metrics, and one Cache Storage cache of 512 KiB. */
async function seed(page: Page) {
  await page.evaluate(async (MiB) => {
    await new Promise<void>((resolve, reject) => {
      const open = indexedDB.open('lwm-studio');
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const db = open.result;
        const tx = db.transaction(['runs', 'checkpoints', 'runMetrics', 'datasets', 'datasetChunks'], 'readwrite');
        const now = Date.now();
        // A dataset run B trained on: 200 trajectories of about 1 KiB.
        const trajectories = Array.from({ length: 200 }, (_, i) => ({
          id: `t${i}`,
          domain: 'terminal',
          turns: [{ action: 'ls', observation: 'x'.repeat(1000) }],
        }));
        tx.objectStore('datasets').put({
          id: 'ds-notes',
          name: 'notes.jsonl',
          createdAt: now,
          origin: 'import',
          formats: ['lwm'],
          files: ['notes.jsonl'],
          trajectories: 200,
          turns: 200,
          domains: ['terminal'],
          errorCount: 0,
          chunks: 1,
        });
        tx.objectStore('datasetChunks').put({ datasetId: 'ds-notes', index: 0, trajectories });
        const runs: [string, string, number[]][] = [
          ['run-a', 'Run A', [3, 2]],
          ['run-b', 'Run B', [1]],
        ];
        for (const [id, name, sizes] of runs) {
          const refs = sizes.map((mib, i) => ({ key: `${id}/ck${i}`, step: 4 - i, size: mib * MiB, createdAt: now }));
          tx.objectStore('runs').put({
            id,
            name,
            createdAt: now,
            updatedAt: now,
            stage: 'sft',
            spec: { kind: 'train', stage: 'sft', preset: 'micro', steps: 4 },
            data: { datasetId: id === 'run-b' ? 'ds-notes' : null, name: 'x', trajectories: 1 },
            from: null,
            state: 'done',
            step: 4,
            checkpoints: refs.length === 2 ? { last: refs[0], best: refs[1] } : { last: refs[0] },
            resumes: [],
          });
          for (const r of refs) tx.objectStore('checkpoints').put({ key: r.key, runId: id, step: r.step, createdAt: now, bytes: new ArrayBuffer(r.size) });
          tx.objectStore('runMetrics').put({ runId: id, step: 1, values: { loss: 3 } });
        }
        tx.oncomplete = () => (db.close(), resolve());
        tx.onerror = () => reject(tx.error);
      };
    });
    const cache = await caches.open('hub-model-cache');
    await cache.put(new Request(`${location.origin}/models/tiny/model.safetensors`), new Response(new Uint8Array(MiB / 2)));
  }, MiB);
}

/** A kind's row in the Storage table: its count and size cells. */
function kindRow(page: Page, kind: string) {
  const row = page.getByTestId('storage-table').locator(`tr[data-kind="${kind}"]`);
  return { row, count: row.locator('td[data-col="count"]'), size: row.locator('td[data-col="size"]') };
}

test('the Storage card shows what is stored; deleting a run takes its checkpoints and the sizes drop', async ({ page }) => {
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await page.goto('./#/system');
  const card = page.getByRole('article', { name: 'Browser storage' });
  await expect(card.getByTestId('storage-table')).toBeVisible();
  await seed(page);
  await card.getByRole('button', { name: 'Measure again' }).click();

  const runs = kindRow(page, 'runs');
  const checkpoints = kindRow(page, 'checkpoints');
  const cached = kindRow(page, 'caches');
  await expect(runs.count).toHaveText('2');
  await expect(checkpoints.count).toHaveText('3');
  await expect(checkpoints.size).toHaveText('6.00 MiB');
  await expect(cached.count).toHaveText('1');
  await expect(cached.size).toHaveText('512 KiB');
  await expect(card.getByTestId('storage-usage')).toContainText(/ of .*\((under )?\d+(\.\d)?%\)/);

  await expect(kindRow(page, 'datasets').size).toHaveText(/^2\d\d KiB$/);
  await card.getByRole('button', { name: 'Show training runs' }).click();
  await card.getByRole('button', { name: 'Show cached models and files' }).click();
  const runA = card.locator('tr[data-item="run-a"]');
  await expect(runA).toContainText('Run A');
  await expect(runA).toContainText('with 2 checkpoints (5.00 MiB)');
  await expect(card.locator('tr[data-item="cache:hub-model-cache"]')).toContainText('Cache Storage, 1 entry');
  await card.screenshot({ path: docScreenshotPath('system-storage') });

  await card.getByRole('button', { name: 'Delete run Run A' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete this run?' });
  await expect(dialog).toContainText('The run Run A, its metric history and its 2 checkpoints');
  await dialog.getByRole('button', { name: 'Delete run' }).click();

  await expect(runA).toHaveCount(0);
  await expect(runs.count).toHaveText('1');
  await expect(checkpoints.count).toHaveText('1');
  await expect(checkpoints.size).toHaveText('1.00 MiB');
  await expect(card.locator('tr[data-item="run-b"]')).toContainText('with 1 checkpoint (1.00 MiB)');
  // In the database itself: no record of run A is left, run B's are whole; the cache is untouched.
  const left = await page.evaluate(
    () =>
      new Promise<string>((resolve, reject) => {
        const open = indexedDB.open('lwm-studio');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction(['runs', 'checkpoints', 'runMetrics']);
          const r = tx.objectStore('runs').getAllKeys();
          const c = tx.objectStore('checkpoints').getAllKeys();
          const m = tx.objectStore('runMetrics').getAllKeys();
          tx.oncomplete = () => (open.result.close(), resolve(JSON.stringify([r.result, c.result, m.result])));
        };
      }),
  );
  expect(JSON.parse(left)).toEqual([['run-b'], ['run-b/ck0'], [['run-b', 1]]]);
  await expect(cached.size).toHaveText('512 KiB');

  // A dataset a run used: the confirmation names the run, which stays.
  const datasets = kindRow(page, 'datasets');
  await expect(datasets.count).toHaveText('1');
  await card.getByRole('button', { name: 'Show datasets' }).click();
  await card.getByRole('button', { name: 'Delete dataset notes.jsonl' }).click();
  const ask = page.getByRole('dialog', { name: 'Delete this dataset?' });
  await expect(ask).toContainText('The dataset notes.jsonl (');
  await expect(ask).toContainText('Kept, though they used it: run Run B.');
  await ask.getByRole('button', { name: 'Delete dataset' }).click();
  await expect(datasets.count).toHaveText('0');
  await expect(datasets.size).toHaveText('0 B');
  await expect(runs.count).toHaveText('1');

  // The cache as a whole, after its own confirmation.
  await card.getByRole('button', { name: 'Delete all cached models and files' }).click();
  await page.getByRole('dialog', { name: 'Delete all cached models and files?' }).getByRole('button', { name: 'Delete all' }).click();
  await expect(cached.count).toHaveText('0');
  expect(await page.evaluate(() => caches.keys())).toEqual([]);
  await snap(page, 'system-storage-after-delete');
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});

test('with storage nearly full a job warns before it starts: free space, or start anyway', async ({ page }) => {
  test.setTimeout(300_000);
  const errors = collectPageErrors(page);
  await page.addInitScript(() => {
    // A 100 MiB quota with 95 MiB used: 5% free.
    StorageManager.prototype.estimate = async () => ({ usage: 95 * 1024 * 1024, quota: 100 * 1024 * 1024 });
  });
  await page.goto('./#/train');
  await expect(page.getByRole('heading', { name: 'Train', level: 1 })).toBeVisible();
  await page.getByRole('button', { name: 'Train the quick recipe' }).click();
  const warning = page.getByRole('dialog', { name: 'Browser storage is nearly full' });
  await expect(warning).toContainText('5.00 MiB free of 100 MiB (5%), and this training run is expected to write about');
  await snap(page, 'quota-warning');
  await warning.getByRole('button', { name: 'Free space' }).click();
  await expect(page).toHaveURL(/#\/system$/);
  await expect(page.getByRole('heading', { name: 'Browser storage' })).toBeFocused();
  await expect(page.getByTestId('storage-usage')).toContainText('95.0 MiB of 100 MiB (95%)');
  // Nothing started.
  await expect(kindRow(page, 'runs').count).toHaveText('0');

  await page.goto('./#/bench');
  await expect(page.getByLabel('Dataset', { exact: true })).toContainText('Default dataset', { timeout: 120_000 });
  for (const box of await page.getByRole('group', { name: 'Domains' }).getByRole('checkbox').all()) {
    const name = ((await box.locator('xpath=..').textContent()) ?? '').trim();
    if (name !== 'terminal') await box.uncheck();
  }
  await page.getByLabel('Samples per domain').fill('1');
  await page.getByRole('button', { name: 'Run benchmark' }).click();
  await expect(warning).toContainText('5.00 MiB free of 100 MiB (5%). This bench may stop when it fills');
  await warning.getByRole('button', { name: 'Not now' }).click();
  await expect(warning).toBeHidden();
  await expect(page.getByTestId('bench-list').getByRole('listitem')).toHaveCount(0);
  await page.getByRole('button', { name: 'Run benchmark' }).click();
  await warning.getByRole('button', { name: 'Start anyway' }).click();
  await expect(page.getByTestId('bench-list')).toContainText('done', { timeout: 120_000 });
  expect(errors).toEqual([]);
});
