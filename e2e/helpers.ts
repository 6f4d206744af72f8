import { expect, type Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';

export const ARTIFACTS = 'e2e/artifacts';

/** Saves a screenshot as a test artefact (kept in e2e/artifacts/, git-ignored). */
export async function snap(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = `${ARTIFACTS}/${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Fails the test if the page makes a request anywhere but its own origin. */
export function forbidForeignRequests(page: Page): string[] {
  const foreign: string[] = [];
  page.on('request', (req) => {
    const url = new URL(req.url());
    if (url.protocol === 'data:' || url.protocol === 'blob:') return;
    if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') foreign.push(req.url());
  });
  return foreign;
}

export async function expectNoPageErrors(page: Page, errors: string[]) {
  expect(errors, `page errors: ${errors.join('\n')}`).toEqual([]);
}

export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}
