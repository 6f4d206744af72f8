import { expect, test } from '@playwright/test';
import { collectPageErrors, forbidForeignRequests, snap } from './helpers.ts';

test('System view shows the adapter and the self-test passes (served under a sub-path)', async ({ page }) => {
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  await page.goto('./');
  await expect(page).toHaveURL(/\/studio\/#\/system$/);
  await expect(page.getByRole('heading', { name: 'System', level: 1 })).toBeVisible();
  await expect(page.getByTestId('adapter-vendor')).not.toHaveText('');
  const vendor = await page.getByTestId('adapter-vendor').textContent();
  const arch = await page.getByTestId('adapter-architecture').textContent();
  console.log(`[e2e] adapter: ${vendor} / ${arch}`);
  await expect(page.getByRole('heading', { name: 'Limits for training' })).toBeVisible();

  await page.getByRole('button', { name: 'Run self-test' }).click();
  await expect(page.getByTestId('selftest-summary')).toContainText('Self-test passed', { timeout: 150_000 });
  await expect(page.getByTestId('selftest-table')).toContainText('GFLOP/s');
  const shot = await snap(page, 'system-view');
  console.log(`[e2e] screenshot: ${shot}`);
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});

test('a lost device is reported and can be re-created', async ({ page }) => {
  await page.goto('./#/system');
  await expect(page.getByTestId('adapter-vendor')).not.toHaveText('');
  await page.getByText('Recovery').click();
  await page.getByRole('button', { name: 'Simulate device loss' }).click();
  await expect(page.getByRole('alert')).toContainText('The GPU device was lost');
  await page.getByRole('button', { name: 'Re-create device' }).click();
  await expect(page.getByTestId('adapter-vendor')).not.toHaveText('');
  await expect(page.getByRole('alert')).toHaveCount(0);
});

test("the page opens no GPU device: the System view shows the jobs worker's", async ({ page }) => {
  await page.addInitScript(() => {
    // Counts devices requested by the page itself (init scripts do not run in workers).
    const w = window as unknown as { pageDevices: number };
    w.pageDevices = 0;
    const request = GPUAdapter.prototype.requestDevice;
    GPUAdapter.prototype.requestDevice = function (this: GPUAdapter, ...args: Parameters<GPUAdapter['requestDevice']>) {
      w.pageDevices++;
      return request.apply(this, args);
    };
  });
  await page.goto('./#/system');
  await expect(page.getByTestId('adapter-vendor')).not.toHaveText('');
  await page.getByText('Recovery').click();
  await page.getByRole('button', { name: 'Simulate device loss' }).click();
  await expect(page.getByRole('alert')).toContainText('The GPU device was lost');
  await page.getByRole('button', { name: 'Re-create device' }).click();
  await expect(page.getByTestId('adapter-vendor')).not.toHaveText('');
  expect(await page.evaluate(() => (window as unknown as { pageDevices: number }).pageDevices)).toBe(0);
});

test('without WebGPU the app says so plainly and how to get it', async ({ page }) => {
  await page.addInitScript(() => {
    // As in a browser that has no WebGPU at all.
    delete (Navigator.prototype as unknown as { gpu?: unknown }).gpu;
  });
  const errors = collectPageErrors(page);
  await page.goto('./#/system');
  const alert = page.getByRole('alert');
  await expect(alert).toContainText('WebGPU is not available');
  await expect(alert).toContainText('navigator.gpu is missing');
  await expect(alert).toContainText('--enable-unsafe-webgpu');
  await snap(page, 'system-no-webgpu');
  expect(errors).toEqual([]);
});

test('the URL names the view; an unknown view says so', async ({ page }) => {
  await page.goto('./#/no-such-view');
  await expect(page.getByRole('heading', { name: 'No such view' })).toBeVisible();
  await page.getByRole('link', { name: 'Go to System' }).click();
  await expect(page).toHaveURL(/#\/system$/);
});
