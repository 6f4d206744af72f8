// The Bench as a person uses it: train a micro checkpoint, then score it beside the copy-last
// and reference baselines on 3 domains × 4 held-out turns with the local judge; reload in the
// middle and resume; the reference scores highest; drill into a sample; export each backend's
// judged records and check that `lwm score` prints the same numbers as the page; import the
// public scorer's judged file and see its table.
import { expect, test, type Page } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { chatServer, ARTIFACTS, collectPageErrors, forbidForeignRequests, snap, trainMicroSft } from './helpers.ts';

const DOMAINS = ['terminal', 'mcp', 'search'];
const PER_DOMAIN = 4;

/** The page's table rows of one backend: domain → the cells lwm score prints, in its column order. */
async function tableRows(page: Page, backend: string): Promise<Record<string, string[]>> {
  return page.getByTestId('bench-table').evaluate((table, name) => {
    const out: Record<string, string[]> = {};
    for (const body of Array.from(table.querySelectorAll('tbody'))) {
      const row = Array.from(body.querySelectorAll('tr')).find((r) => r.getAttribute('data-backend') === name);
      if (!row) continue;
      out[body.getAttribute('data-domain')!] = Array.from(row.querySelectorAll('td')).map((td) => (td.textContent ?? '').trim().replace('–', '-'));
    }
    return out;
  }, backend);
}

/** `lwm score FILE` (the default table) as domain → cells. */
function lwmScore(file: string): Record<string, string[]> {
  const text = execFileSync(process.execPath, ['bin/lwm.mjs', 'score', file], { encoding: 'utf8' });
  const out: Record<string, string[]> = {};
  for (const line of text.split('\n').slice(2)) {
    if (!line.trim() || /^-+(\s+-+)*$/.test(line.trim())) continue;
    const [domain, ...cells] = line.trim().split(/\s{2,}/);
    out[domain] = cells;
  }
  return out;
}

test('Bench: a micro checkpoint against copy-last and reference, resume after reload, export and lwm score agree', async ({ page }) => {
  test.setTimeout(900_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);

  // A micro checkpoint: a few SFT steps on the terminal domain.
  await trainMicroSft(page, { tokens: 64, timeout: 300_000 });

  // The Bench: 3 domains × 4 held-out turns, the checkpoint and both baselines, the local judge.
  await page.goto('./#/bench');
  await expect(page.getByRole('heading', { name: 'Bench', level: 1 })).toBeVisible();
  await expect(page.getByLabel('Dataset', { exact: true })).toContainText('Default dataset', { timeout: 120_000 });
  const domains = page.getByRole('group', { name: 'Domains' });
  for (const box of await domains.getByRole('checkbox').all()) {
    const name = ((await box.locator('xpath=..').textContent()) ?? '').trim();
    if (!DOMAINS.includes(name)) await box.uncheck();
  }
  await page.getByLabel('Samples per domain').fill('many');
  await page.getByRole('button', { name: 'Run benchmark' }).click();
  await expect(page.getByTestId('bench-form-errors')).toContainText("Samples per domain must be a whole number from 1 to 100000; got 'many'.");
  await page.getByLabel('Samples per domain').fill(String(PER_DOMAIN));
  const backends = page.getByRole('group', { name: 'Backends' });
  await expect(backends.getByRole('checkbox', { name: /^copy-last/ })).toBeChecked();
  await expect(backends.getByRole('checkbox', { name: /^reference/ })).toBeChecked();
  await backends.getByRole('checkbox', { name: /· last · step 4$/ }).check();
  await page.getByLabel('Max new tokens').fill('40');
  await expect(page.getByLabel('Judge', { exact: true })).toHaveValue('local');
  await page.getByRole('button', { name: 'Run benchmark' }).click();
  await expect(page.getByTestId('bench-form-errors')).toHaveCount(0);

  // Progress with an estimate; reload in the middle of the run.
  const total = DOMAINS.length * PER_DOMAIN * 3 * 2; // samples × backends × (prediction + judgement)
  const progress = page.getByTestId('bench-progress-text');
  await expect(progress).toContainText(new RegExp(`^\\d+ / ${total}`), { timeout: 300_000 });
  // The micro checkpoint generates quickly: read the count without waiting on the element (it
  // goes when the run ends), often, and reload as soon as some of the work is stored.
  const readDone = () => page.evaluate(() => document.querySelector('[data-testid="bench-progress-text"]')?.textContent ?? null);
  let before: string | null = null;
  await expect
    .poll(async () => ((before = await readDone()) === null ? -1 : Number(/^(\d+)/.exec(before)?.[1] ?? 0)), { timeout: 300_000, intervals: [50] })
    .toBeGreaterThan(0);
  console.log(`[e2e] bench progress before reload: ${before}`);
  await page.reload();
  const offer = page.getByTestId('bench-resume-offer');
  await expect(offer).toContainText('was running when the page closed', { timeout: 60_000 });
  await offer.getByRole('button', { name: 'Resume the benchmark' }).click();
  await expect(offer).toHaveCount(0);
  await expect(page.getByTestId('bench-progress')).toHaveCount(0, { timeout: 600_000 });
  await expect(page.getByTestId('bench-list')).toContainText('done');

  // The table: every backend scored 12 samples; the reference is highest.
  const table = page.getByTestId('bench-table');
  const overall = table.locator('tbody[data-domain="overall"] tr');
  await expect(overall).toHaveCount(3);
  const names = await overall.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-backend')!));
  const checkpoint = names.find((n) => n.startsWith('local:'))!;
  expect(names).toEqual([checkpoint, 'copy-last', 'reference']);
  const totals: Record<string, number> = {};
  for (const name of names) {
    const cells = (await tableRows(page, name)).overall;
    totals[name] = Number(cells[5]);
    expect(Number(cells[6]) + Number(cells[7]), `${name}: valid + failed`).toBe(DOMAINS.length * PER_DOMAIN);
  }
  console.log(`[e2e] overall totals: ${JSON.stringify(totals)}`);
  expect(totals.reference).toBe(100);
  expect(totals.reference).toBeGreaterThan(totals['copy-last']);
  expect(totals.reference).toBeGreaterThan(totals[checkpoint]);
  for (const d of DOMAINS) await expect(table.locator(`tbody[data-domain="${d}"] tr`)).toHaveCount(3);
  await expect(page.getByTestId('bench-chart').locator('rect.bar')).toHaveCount(3 * (DOMAINS.length + 1));

  // Drill into a sample: the diff and the verdict.
  const samples = page.getByTestId('bench-samples');
  await expect(samples.locator('tbody tr')).toHaveCount(DOMAINS.length * PER_DOMAIN);
  await samples.locator('tbody tr').first().getByRole('button').click();
  const sample = page.getByTestId('bench-sample');
  await sample.getByLabel('Backend').selectOption({ label: 'copy-last' });
  await expect(sample.getByTestId('bench-diff')).toBeVisible();
  await expect(sample.getByTestId('bench-verdict')).toContainText('factuality');
  await expect(sample.getByTestId('bench-verdict')).toContainText('Verifier:');

  await page.getByRole('heading', { name: 'Bench', level: 1 }).scrollIntoViewIfNeeded();
  // e2e/artifacts/bench-view.png is docs/app.md's docs/screenshots/bench.png.
  console.log(`[e2e] screenshot: ${await snap(page, 'bench-view')}`);

  // Export each backend's judged records: lwm score prints the page's numbers.
  for (const name of names) {
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: `Export judged records of ${name}` }).click();
    const file = await download;
    const path = `${ARTIFACTS}/${file.suggestedFilename()}`;
    await file.saveAs(path);
    const cli = lwmScore(path);
    const shown = await tableRows(page, name);
    expect(Object.keys(cli).sort()).toEqual([...DOMAINS, 'overall'].sort());
    for (const [domain, cells] of Object.entries(cli)) expect(shown[domain], `${name} · ${domain}`).toEqual(cells);
  }
  const predictions = page.waitForEvent('download');
  await page.getByRole('button', { name: `Export predictions of ${checkpoint}` }).click();
  const pred = await predictions;
  expect(pred.suggestedFilename()).toMatch(/\.predictions\.jsonl$/);

  // Import the public scorer's judged file: its table, with the public overall figure.
  await page.getByLabel('Import a judged file').setInputFiles('src/core/bench/fixtures/awb-public-judged.jsonl');
  await expect(page.getByTestId('bench-selected')).toContainText('Imported from awb-public-judged.jsonl');
  const imported = page.getByTestId('bench-table').locator('tbody[data-domain="overall"] tr');
  await expect(imported).toHaveCount(1);
  await expect(imported.locator('td[data-col="total"]')).toHaveText('63.33');
  await expect(imported.locator('td[data-col="valid"]')).toHaveText('10');
  await expect(imported.locator('td[data-col="failed"]')).toHaveText('2');
  // The public file carries no verifier verdicts: no exact-match columns, as lwm score prints it.
  await expect(page.getByTestId('bench-table').locator('th', { hasText: 'exact' })).toHaveCount(0);
  await snap(page, 'bench-import');

  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});

/**
 * A local OpenAI-compatible server that lets the page in (CORS): model "echo" streams the last
 * user message back as its prediction; model "judge" compares the simulated and the real
 * observation in the judge's prompt and answers in the verdict format (5 when equal).
 */
async function fakeEndpoint() {
  const auth: Record<string, Set<string>> = { echo: new Set(), judge: new Set(), slow: new Set() };
  const server = await chatServer(
    (b, req) => {
      auth[b.model]?.add(String(req.headers.authorization));
      const last = b.messages.at(-1)!.content;
      if (b.model !== 'judge') return `<predicted_observation>\n${last.replace(/^### Turn \d+\n\*\*Action:\*\*\n/, '')}\n</predicted_observation>`;
      const sim = /<simulated>\n([\s\S]*?)\n<\/simulated>/.exec(last)?.[1] ?? '';
      const real = /<real>\n([\s\S]*?)\n<\/real>/.exec(last)?.[1] ?? '';
      const s = sim === real ? 5 : sim.length && real.startsWith(sim.slice(0, 8)) ? 3 : 2;
      return `Compared.\n<verdict>\n${JSON.stringify({ strengths: s === 5 ? ['exact'] : [], weaknesses: s === 5 ? [] : ['differs'], scores: { format: s, factuality: s, consistency: s, realism: s, quality: s } })}\n</verdict>`;
    },
    // "slow" takes its time, so a run of it can be cancelled half-way; streams come in pieces.
    { delayMs: (b) => (b.model === 'slow' ? 1500 : 0), chunk: 16 },
  );
  return { ...server, auth };
}

test('Bench: an endpoint model, then an endpoint LLM judge beside the local one, and their agreement; keys never stored', async ({ page }) => {
  test.setTimeout(300_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  const server = await fakeEndpoint();
  const tStart = Date.now();
  try {
    await page.goto('./#/bench');
    await expect(page.getByLabel('Dataset', { exact: true })).toContainText('Default dataset', { timeout: 120_000 });
    const domains = page.getByRole('group', { name: 'Domains' });
    for (const box of await domains.getByRole('checkbox').all()) {
      const name = ((await box.locator('xpath=..').textContent()) ?? '').trim();
      if (!['terminal', 'mcp'].includes(name)) await box.uncheck();
    }
    await page.getByLabel('Samples per domain').fill('3');
    await page.getByText('Add an OpenAI-compatible endpoint').click();
    await page.getByLabel('Base URL', { exact: true }).fill('localhost:8000');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await expect(page.getByText('The base URL must start with http:// or https://')).toBeVisible();
    await page.getByLabel('Base URL', { exact: true }).fill(server.base);
    await page.getByLabel('Model name', { exact: true }).fill('echo');
    await page.getByLabel('API key', { exact: true }).fill('sk-model-key');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await expect(page.getByRole('list', { name: 'Endpoints' })).toContainText('echo');
    await page.getByRole('button', { name: 'Run benchmark' }).click();
    await expect(page.getByTestId('bench-progress')).toHaveCount(0, { timeout: 120_000 });
    const overall = page.getByTestId('bench-table').locator('tbody[data-domain="overall"] tr');
    await expect(overall).toHaveCount(3);
    expect(await overall.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-backend')))).toEqual(['endpoint:echo', 'copy-last', 'reference']);
    await expect(page.getByTestId('bench-agreement')).toContainText('Agreement needs a second judge');

    // Judge the same predictions again with the LLM judge: agreement appears.
    const again = page.getByRole('form', { name: 'Judge again' });
    await expect(again.getByLabel('Judge the predictions again with')).toHaveValue('endpoint');
    await again.getByLabel('Judge endpoint').selectOption('new-endpoint');
    await again.getByLabel('Base URL').fill(server.base);
    await again.getByLabel('Model name').fill('judge');
    await again.getByLabel('API key').fill('sk-judge-key');
    await again.getByRole('button', { name: 'Use this endpoint' }).click();
    await expect(again.getByLabel('Judge endpoint')).toContainText('judge at');
    await again.getByRole('button', { name: 'Judge again' }).click();
    await expect(page.getByTestId('bench-progress')).toHaveCount(0, { timeout: 120_000 });
    const judgeId = `judge:judge@${new URL(server.base).host}`;
    const agreement = page.getByTestId('bench-agreement').locator('tbody tr');
    await expect(agreement).toHaveCount(1);
    // The progress bar may not have appeared yet when the wait above ran: the row fills in as the
    // judge goes, so wait for its final counts (3 samples, 18 paired scores) before reading it.
    await expect(agreement.locator('td').nth(2)).toHaveText('3', { timeout: 120_000 });
    await expect(agreement.locator('td').nth(3)).toHaveText('18', { timeout: 120_000 });
    const cells = await agreement.locator('td').allTextContents();
    expect(cells.slice(0, 4)).toEqual([judgeId, 'local-rubric', '3', '18']);
    expect(cells[4]).toMatch(/^-?\d\.\d{3}$/);
    // The LLM judge's own table: the reference at the top.
    await page.getByLabel('Scores by judge').selectOption(judgeId);
    await expect(page.getByTestId('bench-table').locator('tbody[data-domain="overall"] tr[data-backend="reference"] td[data-col="total"]')).toHaveText(
      '100.00',
    );
    await page.getByTestId('bench-samples').locator('tbody tr').first().getByRole('button').click();
    await expect(page.getByTestId('bench-verdict')).toContainText(/Strengths|Weaknesses/);

    // The keys went to the endpoint and nowhere else: not in IndexedDB, localStorage or an export.
    expect([...server.auth.echo]).toEqual(['Bearer sk-model-key']);
    expect([...server.auth.judge]).toEqual(['Bearer sk-judge-key']);
    const stored = await page.evaluate(
      () =>
        new Promise<string>((resolve, reject) => {
          const open = indexedDB.open('lwm-studio');
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const tx = open.result.transaction(['benches', 'benchResults']);
            const a = tx.objectStore('benches').getAll();
            const b = tx.objectStore('benchResults').getAll();
            tx.oncomplete = () => resolve(JSON.stringify([a.result, b.result]) + JSON.stringify({ ...localStorage }));
          };
        }),
    );
    expect(stored).toContain('echo');
    expect(stored).not.toContain('sk-model-key');
    expect(stored).not.toContain('sk-judge-key');
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export judged records of endpoint:echo' }).click();
    const file = await download;
    const path = `${ARTIFACTS}/${file.suggestedFilename()}`;
    await file.saveAs(path);
    const { readFileSync } = await import('node:fs');
    // The keys themselves, not 'sk-': a random id in the records may hold those letters.
    const exported = readFileSync(path, 'utf8');
    expect(exported).not.toContain('sk-model-key');
    expect(exported).not.toContain('sk-judge-key');
    await snap(page, 'bench-agreement');
    console.log(`[e2e] endpoint model and judge done in ${Date.now() - tStart} ms`);

    // Cancel a slow run half-way; continue it later: it does only what is missing.
    // The endpoints set up above are offered again (shared with the Playground); the new one is chosen.
    await page
      .getByRole('list', { name: 'Endpoints' })
      .getByRole('checkbox', { name: /endpoint:echo/ })
      .uncheck();
    await page.getByText('Add an OpenAI-compatible endpoint').click();
    await page.getByLabel('Base URL', { exact: true }).fill(server.base);
    await page.getByLabel('Model name', { exact: true }).fill('slow');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const backends = page.getByRole('group', { name: 'Backends' });
    await backends.getByRole('checkbox', { name: /^copy-last/ }).uncheck();
    await backends.getByRole('checkbox', { name: /^reference/ }).uncheck();
    await page.getByLabel('Name (optional)').fill('slow run');
    const tRun = Date.now();
    await page.getByRole('button', { name: 'Run benchmark' }).click();
    const progress = page.getByTestId('bench-progress-text');
    await expect(progress).toHaveText(/^[1-9]\d* \/ 12/, { timeout: 60_000 });
    console.log(`[e2e] slow run: first progress after ${Date.now() - tRun} ms`);
    const t0 = Date.now();
    await page.getByTestId('bench-progress').getByRole('button', { name: 'Cancel' }).click();
    await expect(page.getByTestId('bench-progress')).toHaveCount(0, { timeout: 60_000 });
    const list = page.getByTestId('bench-list').getByRole('listitem').filter({ hasText: 'slow run' });
    await expect(list).toContainText('stopped');
    console.log(`[e2e] cancelled in ${Date.now() - t0} ms`);
    const kept = await page.getByTestId('bench-samples').locator('tbody tr').count();
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(6);
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect(page.getByTestId('bench-progress')).toHaveCount(0, { timeout: 60_000 });
    await expect(list).toContainText('done');
    console.log(`[e2e] continued and done ${Date.now() - t0} ms after the cancel`);
    await expect(page.getByTestId('bench-table').locator('tbody[data-domain="overall"] tr[data-backend="endpoint:slow"] td[data-col="valid"]')).toHaveText('6');

    // The endpoints set up in the Bench are the Playground's too, keys in memory as they were left.
    await page.goto('./#/playground');
    const picker = page.getByLabel('Backend', { exact: true });
    await expect(picker).toContainText('echo at');
    await expect(picker).toContainText('slow at');
    await picker.selectOption({ label: `echo at ${server.base}` });
    await expect(page.getByText('key in memory only')).toBeVisible();
  } finally {
    const tc = Date.now();
    server.closeAllConnections();
    await server.close();
    console.log(`[e2e] server closed in ${Date.now() - tc} ms`);
  }
  expect(errors).toEqual([]);
  expect(foreign).toEqual([]);
});
