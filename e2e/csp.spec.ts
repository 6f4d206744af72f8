import { expect, test, type Page } from '@playwright/test';
import { collectPageErrors, forbidForeignRequests } from './helpers.ts';

/** Records every CSP violation the page reports, from the first script on. */
async function watchViolations(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { __csp: string[] }).__csp = seen;
    document.addEventListener('securitypolicyviolation', (e) =>
      seen.push(`${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`),
    );
  });
  return () => page.evaluate(() => [...(window as unknown as { __csp: string[] }).__csp]);
}

/** What shows that each view has loaded and done its first work (data, workers, Monaco). */
const READY: Record<string, (page: Page) => Promise<void>> = {
  '#/system': (page) => expect(page.getByTestId('adapter-vendor')).not.toHaveText('', { timeout: 60_000 }),
  '#/data': (page) => expect(page.getByTestId('stats-table')).toBeVisible({ timeout: 120_000 }),
  '#/trajectories': (page) => expect(page.getByTestId('trajectory-row').first()).toBeVisible({ timeout: 60_000 }),
  '#/prompts': async (page) => {
    await expect(page.getByTestId('template-editor')).toHaveAttribute('data-ready', 'true', { timeout: 120_000 });
    await expect(page.getByTestId('preview-tokens')).toHaveText(/^[\d,]+ tokens$/, { timeout: 60_000 });
  },
  '#/playground': (page) => expect(page.getByTestId('pg-action-space')).not.toBeEmpty({ timeout: 60_000 }),
  '#/train': (page) => expect(page.getByRole('heading', { name: 'Train', level: 1 })).toBeVisible({ timeout: 60_000 }),
  '#/bench': async (page) => {
    await expect(page.getByRole('heading', { name: 'Benchmarks' })).toBeVisible({ timeout: 60_000 });
    await expect(page.getByLabel('Dataset', { exact: true })).toContainText('Default dataset', { timeout: 60_000 });
  },
};

test('the built site carries a CSP without unsafe-eval, and every view runs under it with no violation', async ({ page }) => {
  const violations = await watchViolations(page);
  const errors = collectPageErrors(page);
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  const foreign = forbidForeignRequests(page);

  const res = await page.goto('./');
  const header = res!.headers()['content-security-policy'];
  const meta = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  for (const policy of [header, meta]) {
    expect(policy).toContain("default-src 'self'");
    expect(policy).toMatch(/connect-src 'self' http:\/\/localhost:\* http:\/\/127\.0\.0\.1:\*/);
    // The Hugging Face Hub and its download hosts (From the Hub), as no VITE_HF_ENDPOINT names a mirror.
    expect(policy).toContain('https://huggingface.co https://*.huggingface.co https://*.hf.co');
    expect(policy).not.toContain("'unsafe-eval'");
    expect(policy).not.toMatch(/script-src[^;]*'unsafe-inline'/);
  }

  // Every view in the navigation, in order, each until it has done its first work.
  const links = await page
    .getByRole('navigation', { name: 'Views' })
    .getByRole('link')
    .evaluateAll((as) => as.map((a) => a.getAttribute('href')!));
  expect(links.length).toBeGreaterThanOrEqual(5);
  for (const href of links) {
    await page.getByRole('navigation', { name: 'Views' }).locator(`a[href="${href}"]`).click();
    await expect(page).toHaveURL(new RegExp(`${href.replace(/[/#]/g, '\\$&')}$`));
    const ready = READY[href];
    expect(ready, `no readiness check for ${href}: add one`).toBeDefined();
    await ready(page);
    expect(await violations(), `CSP violations in ${href}`).toEqual([]);
  }
  expect(consoleErrors.filter((m) => /Content Security Policy|Refused to/i.test(m))).toEqual([]);
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);

  // The policy is enforced and the watch sees it: an inline script and a string timer (eval) are
  // refused and reported. (page.evaluate itself runs outside the page's policy.)
  const ran = await page.evaluate(async () => {
    const w = window as unknown as { __inline?: number; __timer?: number };
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1';
    document.head.append(s);
    (setTimeout as unknown as (code: string, ms: number) => void)('window.__timer = 1', 0);
    await new Promise((r) => setTimeout(r, 100));
    return [w.__inline ?? 0, w.__timer ?? 0];
  });
  expect(ran).toEqual([0, 0]);
  await expect.poll(violations).toContainEqual(expect.stringMatching(/^script-src\S* blocked eval/));
  await expect.poll(violations).toContainEqual(expect.stringMatching(/^script-src\S* blocked inline/));
});
