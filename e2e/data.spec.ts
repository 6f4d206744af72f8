import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { collectPageErrors, forbidForeignRequests, snap } from './helpers.ts';

// Three real trajectories from the default dataset, so the import below is a realistic file.
const DEFAULT_LINES = readFileSync('public/default-dataset.jsonl', 'utf8').split('\n').filter(Boolean);

async function openData(page: Page) {
  await page.goto('./#/data');
  await expect(page.getByRole('heading', { name: 'Data', level: 1 })).toBeVisible();
  // First start: the default dataset is fetched, parsed and stored with no action needed.
  await expect(page.getByTestId('stats-table')).toBeVisible({ timeout: 120_000 });
}

test('a new user sees the default dataset and its statistics by domain', async ({ page }) => {
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await openData(page);
  const list = page.getByTestId('dataset-list');
  await expect(list).toContainText('Default dataset');
  await expect(list.getByRole('radio', { name: /Use Default dataset/ })).toBeChecked();
  const stats = page.getByTestId('stats-table');
  for (const d of ['mcp', 'search', 'terminal', 'swe', 'android', 'web', 'os']) {
    await expect(stats.locator(`tr[data-domain="${d}"]`)).toBeVisible();
    await expect(stats.locator(`tr[data-domain="${d}"] svg[role="img"]`)).toHaveAttribute('aria-label', /Retrieval \d/);
  }
  await expect(page.getByTestId('total-trajectories')).toHaveText(String(DEFAULT_LINES.length.toLocaleString('en-US')));
  await expect(page.getByTestId('mean-weight-overall')).toHaveText(/^0\.\d{3}$/);
  const shot = await snap(page, 'data-view');
  console.log(`[e2e] screenshot: ${shot}`);

  // Kept across reloads: the second start reads IndexedDB instead of fetching again.
  let fetchedAgain = false;
  page.on('request', (r) => {
    if (r.url().endsWith('default-dataset.jsonl')) fetchedAgain = true;
  });
  await page.reload();
  await expect(page.getByTestId('stats-table')).toBeVisible();
  await expect(page.getByTestId('total-trajectories')).toHaveText(String(DEFAULT_LINES.length.toLocaleString('en-US')));
  expect(fetchedAgain).toBe(false);
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});

test('an import with one broken line names the file and line, keeps the rest, and changes nothing stored', async ({ page }) => {
  const errors = collectPageErrors(page);
  await openData(page);
  const text = [DEFAULT_LINES[0], '{"id": "broken", "domain": "mcp", "turns": [', DEFAULT_LINES[1], DEFAULT_LINES[2]].join('\n') + '\n';
  await page.getByLabel('File format').selectOption('auto');
  await page.getByTestId('import-input').setInputFiles({ name: 'my-runs.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(text) });
  const result = page.getByTestId('import-result');
  await expect(result).toContainText('Imported 3 trajectories from my-runs.jsonl');
  await expect(page.getByTestId('import-errors')).toContainText('my-runs.jsonl:2: not valid JSON');
  await snap(page, 'data-import-error');

  // The import became a second dataset and the active one; the default is untouched.
  const list = page.getByTestId('dataset-list');
  await expect(list.locator('tbody tr')).toHaveCount(2);
  await expect(list.getByRole('radio', { name: 'Use my-runs.jsonl' })).toBeChecked();
  await expect(page.getByTestId('total-trajectories')).toHaveText('3');
  await list.getByRole('radio', { name: /Use Default dataset/ }).check();
  await expect(page.getByTestId('total-trajectories')).toHaveText(DEFAULT_LINES.length.toLocaleString('en-US'));

  // A file that has nothing readable is refused without creating a dataset.
  await page.getByTestId('import-input').setInputFiles({ name: 'junk.jsonl', mimeType: 'text/plain', buffer: Buffer.from('hello\nworld\n') });
  await expect(page.getByTestId('import-result')).toContainText('Nothing was stored');
  await expect(page.getByTestId('import-errors')).toContainText('junk.jsonl:1');
  await expect(list.locator('tbody tr')).toHaveCount(2);

  // Drag and drop works as the picker does.
  const dataTransfer = await page.evaluateHandle((line) => {
    const dt = new DataTransfer();
    dt.items.add(new File([line + '\n'], 'dropped.jsonl', { type: 'application/x-ndjson' }));
    return dt;
  }, DEFAULT_LINES[3]);
  await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer });
  await expect(page.getByTestId('import-result')).toContainText('Imported 1 trajectories from dropped.jsonl');
  await expect(list.locator('tbody tr')).toHaveCount(3);

  // Delete asks first; cancelling keeps the dataset.
  await page.getByRole('button', { name: 'Delete dropped.jsonl' }).click();
  await expect(page.getByRole('dialog')).toContainText('Delete this dataset?');
  await page.getByRole('button', { name: 'Cancel' }).click();
  await expect(list.locator('tbody tr')).toHaveCount(3);
  await page.getByRole('button', { name: 'Delete dropped.jsonl' }).click();
  await page.getByRole('button', { name: 'Delete dataset' }).click();
  await expect(list.locator('tbody tr')).toHaveCount(2);

  await page.reload();
  await expect(page.getByTestId('dataset-list').locator('tbody tr')).toHaveCount(2);
  expect(errors).toEqual([]);
});

test('a trajectory id repeated across imported files is kept once, the later copy named with both places', async ({ page }) => {
  const errors = collectPageErrors(page);
  await openData(page);
  const id = JSON.parse(DEFAULT_LINES[1]).id;
  await page.getByTestId('import-input').setInputFiles([
    { name: 'a.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from([DEFAULT_LINES[0], DEFAULT_LINES[1]].join('\n') + '\n') },
    { name: 'b.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from([DEFAULT_LINES[1], DEFAULT_LINES[2]].join('\n') + '\n') },
  ]);
  await expect(page.getByTestId('import-result')).toContainText('Imported 3 trajectories from a.jsonl, b.jsonl');
  await expect(page.getByTestId('import-errors')).toContainText(
    `b.jsonl:1: /id: duplicate trajectory id "${id}": this copy (b.jsonl:1) is left out, the id was first seen at a.jsonl:2`,
  );
  await expect(page.getByTestId('total-trajectories')).toHaveText('3');
  expect(errors).toEqual([]);
});

test('export downloads every format the data core writes', async ({ page }) => {
  await openData(page);
  for (const target of ['native', 'agentworldbench', 'trl', 'verl']) {
    await page.getByLabel('Export format').selectOption(target);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: /^Download/ }).click()]);
    expect(download.suggestedFilename()).toContain(`.${target}`);
    const path = await download.path();
    if (target === 'verl') {
      // verl reads Parquet: the file starts and ends with the magic bytes.
      expect(download.suggestedFilename()).toMatch(/\.verl\.sft\.parquet$/);
      const bytes = readFileSync(path);
      expect([bytes.subarray(0, 4).toString('latin1'), bytes.subarray(-4).toString('latin1')]).toEqual(['PAR1', 'PAR1']);
      continue;
    }
    const first = readFileSync(path, 'utf8').split('\n')[0];
    expect(() => JSON.parse(first)).not.toThrow();
  }
});
