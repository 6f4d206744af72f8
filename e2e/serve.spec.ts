// `lwm serve` as the app's endpoint: the server started with the app's origin allowed (CORS),
// picked in the Playground as an OpenAI-compatible endpoint, plays a turn of the terminal
// environment: the observation comes back from the server and is judged like any backend's.
import { spawn, type ChildProcess } from 'node:child_process';
import { expect, test } from '@playwright/test';
import { collectPageErrors, snap } from './helpers.ts';

let server: ChildProcess | null = null;
let baseUrl = '';

test.beforeAll(async ({ baseURL }) => {
  const origin = new URL(baseURL!).origin;
  server = spawn(process.execPath, ['bin/lwm.mjs', 'serve', '--model', 'copy-last', '--port', '0', '--allowed-origins', origin], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  baseUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    server!.stdout!.on('data', (d) => {
      out += d;
      const m = /at (http:\/\/\S+\/v1)/.exec(out);
      if (m) resolve(m[1]);
    });
    server!.on('exit', (code) => reject(new Error(`lwm serve exited with ${code}`)));
  });
});

test.afterAll(() => {
  server?.kill('SIGTERM');
});

test('the Playground plays a turn through lwm serve as its endpoint', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto('./#/playground');
  await expect(page.getByRole('heading', { name: 'Playground', level: 1 })).toBeVisible();
  await page.getByLabel('Backend').selectOption('new-endpoint');
  await page.getByLabel('Base URL').fill(baseUrl);
  await page.getByLabel('Model name').fill('copy-last');
  await page.getByRole('button', { name: 'Use this endpoint' }).click();
  await page.getByLabel('Action 1').fill('ls');
  await page.getByRole('button', { name: 'Send' }).click();
  const turn = page.getByTestId('turn-1');
  const predicted = turn.getByLabel('Predicted observation');
  await expect(predicted).toBeVisible({ timeout: 60_000 });
  // copy-last on turn 1 answers the environment's initial state, which the system prompt carries.
  await expect(predicted).not.toBeEmpty();
  await expect(turn.getByTestId('turn-reward')).toContainText(/Reward \d+\.\d\d \/ 25/);
  await expect(page.getByTestId('pg-error')).toHaveCount(0);
  await snap(page, 'playground-serve');
  expect(errors).toEqual([]);
});
