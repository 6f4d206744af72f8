// Prompt optimization as a person runs it. The simulated model is an OpenAI-compatible endpoint
// served here on 127.0.0.1 ("picky"): it simulates (repeats the last observation it was sent) on
// a share of the turns that grows with the instruction lines in its system prompt, and refuses on
// the rest — so it reads the template, and candidates score differently (copy-last and reference
// ignore the template; a micro checkpoint's 64-token context leaves no room for it; each
// instruction line wins it over on about half of the turns, its own half). From the
// Prompts view's versions: "Optimize" v0 on terminal and mcp turns of the default dataset with
// that endpoint, the local judge and the offline optimizer, 3 rounds × 2 candidates; reload in
// the middle and resume (scored templates are kept); the same optimization again gives the same
// lineage; see the lineage (candidates per round with scores and paired tests), the chart of the
// best score per round and the test score; open a candidate's diff against its parent; promote
// it to a template version in the SFT mix, start an SFT run in the Train view, and see that the
// run trains with it (its template mix, and the rows its log says each version renders).
// Also: an ONNX folder as the simulated model (the tiny chat Llama exported with `lwm export --to
// onnx`, as e2e/onnx-folder.spec.ts does), on WASM: one round of one candidate on two dev turns,
// cut off by a reload; resuming without the folder says to pick it again; picked again, the run
// resumes to 'done' with its lineage.
import { expect, test, type Page } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatServer, collectPageErrors, docScreenshotPath, forbidForeignRequests, snap, trainMicroSft } from './helpers.ts';

const ROUNDS = 3;
// A click on something that is not there fails within a minute, not at the test's end.
test.use({ actionTimeout: 60_000 });

/** FNV-1a of a text. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** The "picky" simulator: chat requests only (the form an endpoint gets), each answered after `delayMs`. */
async function pickyEndpoint(delayMs: number) {
  const systems = new Set<string>();
  const server = await chatServer(
    (b) => {
      const system = b.messages[0]?.role === 'system' ? b.messages[0].content : '';
      systems.add(system);
      const instructions = system.match(/^- [A-Z].*$/gmu) ?? [];
      const action = b.messages.at(-1)!.content;
      const last = [...b.messages].reverse().find((m) => m.role === 'assistant')?.content ?? '';
      // Each instruction line wins over about half of the turns, its own half.
      const obeys = instructions.some((line) => hash(`${line}\n${action}`) % 2 === 0);
      return obeys ? `<predicted_observation>\n${last}\n</predicted_observation>` : 'As an AI assistant I cannot run commands.';
    },
    { delayMs: () => delayMs },
  );
  return { ...server, systems };
}

/** Every card's dev score and note, by candidate id. */
async function cards(page: Page): Promise<Record<string, string>> {
  // The list shows the optimization done a moment before the lineage has drawn its last score: wait for every card's score.
  await expect
    .poll(
      () =>
        page.getByTestId('lineage').evaluate((el) =>
          Array.from(el.querySelectorAll('[data-testid^="candidate-"]'))
            .filter((c) => /^candidate-(v0|r\d+c\d+)$/.test(c.getAttribute('data-testid')!))
            .every((c) => (c.querySelector('strong')?.textContent ?? '') !== ''),
        ),
      { timeout: 30_000 },
    )
    .toBe(true);
  return page.getByTestId('lineage').evaluate((el) =>
    Object.fromEntries(
      Array.from(el.querySelectorAll('[data-testid^="candidate-"]'))
        .filter((c) => /^candidate-(v0|r\d+c\d+)$/.test(c.getAttribute('data-testid')!))
        .map((c) => [
          c.getAttribute('data-testid')!.slice('candidate-'.length),
          `${c.querySelector('strong')?.textContent ?? ''} | ${c.querySelector('.lineage-note')?.textContent ?? ''}`,
        ]),
    ),
  );
}

/** Fills the Optimize form (v0, terminal and mcp, the endpoint, 3 rounds × 2 candidates) and starts it. */
async function startOptimization(page: Page, name: string, base: string | null) {
  await page.goto('./#/prompts');
  await expect(page.getByTestId('versions')).toContainText('v0', { timeout: 120_000 });
  await page.getByRole('link', { name: 'Optimize v0' }).click();
  const form = page.getByTestId('optimize-form');
  await expect(form.getByLabel('Start from')).toHaveValue('v0');
  await expect(form.getByLabel('Dataset', { exact: true })).toContainText('Default dataset', { timeout: 120_000 });
  const domains = form.getByRole('group', { name: 'Domains' });
  await expect(domains.getByRole('checkbox', { checked: true })).toHaveCount(7);
  for (const box of await domains.getByRole('checkbox').all())
    if (!['terminal', 'mcp'].includes(((await box.locator('xpath=..').textContent()) ?? '').trim())) await box.uncheck();
  if (base) {
    // A mistyped number is named with what it got.
    await form.getByLabel('Rounds').fill('three');
    await form.getByRole('button', { name: 'Start optimization' }).click();
    await expect(page.getByTestId('optimize-form-errors')).toContainText("Rounds must be a whole number from 1 to 100; got 'three'.");
  }
  await form.getByLabel('Rounds').fill(String(ROUNDS));
  await form.getByLabel('Candidates per round').fill('2');
  await form.getByLabel('Dev samples per domain').fill('6');
  await form.getByLabel('Test samples per domain').fill('3');
  await form.getByLabel('Eval share').fill('1');
  await form.getByLabel('Simulated model').selectOption('endpoint');
  if (base) {
    await form.getByLabel('Model endpoint', { exact: true }).selectOption('new-endpoint');
    await form.getByLabel('Base URL', { exact: true }).fill(base);
    await form.getByLabel('Model name', { exact: true }).fill('picky');
    await form.getByRole('button', { name: 'Use this endpoint' }).click();
  } else {
    const option = (await form
      .locator('#opt-backend-endpoint option', { hasText: /^picky at / })
      .first()
      .textContent())!;
    await form.getByLabel('Model endpoint', { exact: true }).selectOption({ label: option });
  }
  await expect(form.getByLabel('Judge', { exact: true })).toHaveValue('local');
  await expect(form.getByLabel('Optimizer')).toHaveValue('offline');
  await form.getByLabel('Name (optional)').fill(name);
  await form.getByRole('button', { name: 'Start optimization' }).click();
  await expect(page.getByTestId('optimize-form-errors')).toHaveCount(0);
}

test('a link saved with the old spelling of the Optimize path opens the Optimize tab, the version it names chosen', async ({ page }) => {
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  const old = '/optimise'; // old spelling, read for stored data
  await page.goto(`./#/prompts${old}/v0`);
  await expect(page).toHaveURL(/#\/prompts\/optimize\/v0$/);
  const form = page.getByTestId('optimize-form');
  await expect(form.getByLabel('Start from')).toHaveValue('v0');
  await expect(form.getByRole('heading', { name: 'Optimize a template' })).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Prompt editor modes' }).getByRole('link', { name: 'Optimize' })).toHaveAttribute('aria-current', 'page');
  await snap(page, 'optimize-form');
  await page.goto(`./#/prompts${old}`);
  await expect(page).toHaveURL(/#\/prompts\/optimize$/);
  await expect(page.getByTestId('optimize-form')).toBeVisible();
  // Back goes to where the user was before, not to the old path (replaced, not pushed).
  await page.goBack();
  await expect(page).toHaveURL(/#\/prompts\/optimize\/v0$/);
  expect(foreign).toEqual([]);
  expect(errors).toEqual([]);
});

test('Optimize v0 against an endpoint: 3 rounds twice alike, lineage, diff, resume after reload, promote into the SFT mix, an SFT run uses it', async ({
  page,
}) => {
  test.setTimeout(900_000);
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  const server = await pickyEndpoint(40);
  try {
    await startOptimization(page, 'first', server.base);
    // Reload once the start is scored: the stored state is offered for resuming, what was scored kept.
    await expect(page.getByTestId('optimize-progress-text')).toContainText(/^[1-9]\d* \/ \d+ evaluations/, { timeout: 120_000 });
    await page.reload();
    const offer = page.getByTestId('optimize-interrupted');
    await expect(offer).toContainText('was running when the page closed', { timeout: 60_000 });
    console.log(`[e2e] offered after reload: ${await offer.textContent()}`);
    await offer.getByRole('button', { name: 'Resume' }).click();
    await expect(offer).toHaveCount(0);
    await expect(page.getByTestId('optimize-progress')).toHaveCount(0, { timeout: 300_000 });
    await expect(page.getByTestId('optimize-list')).toContainText('done');

    // The lineage: the start, then three rounds of two candidates, each with its score and paired test.
    const lineage = page.getByTestId('lineage');
    await expect(lineage.getByTestId('round-0').getByRole('button')).toHaveCount(1);
    for (let r = 1; r <= ROUNDS; r++) await expect(lineage.getByTestId(`round-${r}`).getByRole('button')).toHaveCount(2);
    const first = await cards(page);
    console.log(`[e2e] lineage: ${JSON.stringify(first, null, 1)}`);
    const scores = Object.values(first).map((c) => c.split(' | ')[0]);
    expect(scores.every((s) => /^\d+\.\d$/.test(s))).toBe(true);
    // The endpoint reads the template (the system message is each candidate's rendered text): scores differ.
    expect(new Set(scores).size).toBeGreaterThan(2);
    expect(server.systems.size).toBeGreaterThan(2);
    const r1 = lineage.getByTestId('candidate-r1c1');
    await expect(r1).toContainText(/\d+\.\d ± \d+\.\d/);
    await expect(r1).toContainText(/Δ [+−]\d+\.\d .* p /);
    await expect(r1).toContainText(/added ".*" for /);
    await expect(page.getByTestId('best-chart').locator('circle.lineage-best')).toHaveCount(ROUNDS + 1);
    await expect(page.getByTestId('test-score')).toContainText(/\d+\.\d on 6 held-out samples/);

    // The same optimization again, uninterrupted: the same candidates, notes and scores.
    await startOptimization(page, 'second', null);
    await expect(page.getByTestId('optimize-progress')).toHaveCount(0, { timeout: 300_000 });
    await expect(page.getByRole('heading', { name: /^Lineage of second/ })).toBeVisible();
    for (let r = 1; r <= ROUNDS; r++) await expect(lineage.getByTestId(`round-${r}`).getByRole('button')).toHaveCount(2);
    expect(await cards(page)).toEqual(first);
    await page.getByTestId('optimize-list').getByRole('button', { name: 'first', exact: true }).click();
    await expect(page.getByRole('heading', { name: /^Lineage of first/ })).toBeVisible();

    // The diff of a round-2 candidate against its parent.
    await lineage.getByTestId('candidate-r2c1').click();
    const details = page.getByTestId('candidate-details');
    await expect(details).toContainText('r2c1 against its parent');
    await details.getByTestId('candidate-diff').scrollIntoViewIfNeeded();
    await expect(details.getByTestId('candidate-diff')).toHaveAttribute('data-ready', 'true', { timeout: 60_000 });
    await expect(details.getByTestId('candidate-diff').locator('.line-insert, .char-insert').first()).toBeAttached();
    await snap(page, 'optimize-lineage');
    await page.getByRole('heading', { name: /^Lineage of/ }).scrollIntoViewIfNeeded();
    // The sticky header would cover the lineage's title in an element screenshot.
    await page
      .locator('article', { has: page.getByRole('heading', { name: /^Lineage of/ }) })
      .screenshot({ path: docScreenshotPath('prompts-lineage'), style: '.header { position: static !important; }' });

    // Promote it, into the SFT mix: it is the next version, with its parent and the optimizer's note.
    await details.getByLabel('add to the SFT template mix').check();
    await details.getByRole('button', { name: 'Promote r2c1 to a template version' }).click();
    await expect(details.getByTestId('promoted-as')).toContainText('Saved as template version v3');
    await expect(lineage.getByTestId('candidate-r2c1')).toContainText('v3');
    await page.getByRole('link', { name: 'Templates', exact: true }).click();
    const row = page.getByTestId('versions').locator('tr', { has: page.getByRole('rowheader', { name: 'v3', exact: true }) });
    await expect(row).toContainText(/optimized \(first, r2c1, dev \d+\.\d\): added /);
    await expect(page.getByLabel('SFT weight of v3')).toHaveValue('1');
  } finally {
    await server.close();
  }

  // An SFT run trains with it: the run names v3 in its template mix, and its log counts the rows v3 renders.
  await trainMicroSft(page, { tokens: 64, timeout: 400_000 });
  const templates = page.getByTestId('run-templates');
  await expect(templates).toContainText(/Templates: v0 \d+% · v1 \d+% · v2 \d+% · compact \d+% · v3 50%/);
  await expect(templates).toContainText(/v3: added ".*" for /);
  await page.getByText(/^Log \(\d+\)$/).click();
  const log = page.locator('pre.train-log');
  await expect(log).toContainText(/templates of the \d+ training rows: .*v3 [1-9]\d*/);
  console.log(`[e2e] ${(await log.textContent())!.split('\n').find((l) => l.startsWith('templates of'))}`);
  await snap(page, 'optimize-sft-run');
  expect(foreign).toEqual([]);
  expect(errors).toEqual([]);
});

test('Optimize v0 with an ONNX folder on WASM: one round, cut off by a reload, the folder picked again, done with its lineage', async ({ page }) => {
  test.setTimeout(600_000);
  const tmp = mkdtempSync(join(tmpdir(), 'lwm-opt-onnx-e2e-'));
  const onnx = join(tmp, 'TinyOnnx');
  execFileSync(process.execPath, ['bin/lwm.mjs', 'export', 'src/model/fixtures/hf/llama-chat', '--to', 'onnx', '-o', onnx]);
  await page.addInitScript(() => {
    delete (Navigator.prototype as unknown as { gpu?: unknown }).gpu;
  });
  const errors = collectPageErrors(page);
  const foreign = forbidForeignRequests(page);
  try {
    await page.goto('./#/prompts');
    await expect(page.getByTestId('versions')).toContainText('v0', { timeout: 120_000 });
    await page.getByRole('link', { name: 'Optimize v0' }).click();
    const form = page.getByTestId('optimize-form');
    await expect(form.getByLabel('Dataset', { exact: true })).toContainText('Default dataset', { timeout: 120_000 });
    for (const box of await form.getByRole('group', { name: 'Domains' }).getByRole('checkbox').all())
      if (((await box.locator('xpath=..').textContent()) ?? '').trim() !== 'terminal') await box.uncheck();
    await form.getByLabel('Rounds').fill('1');
    await form.getByLabel('Candidates per round').fill('1');
    await form.getByLabel('Dev samples per domain').fill('2');
    await form.getByLabel('Test samples per domain').fill('0');
    await form.getByLabel('Eval share').fill('1');
    await form.getByLabel('Max new tokens').fill('4');
    await form.getByLabel('Simulated model').selectOption('onnx');
    // Not picked yet: the form says what to do.
    await form.getByRole('button', { name: 'Start optimization' }).click();
    await expect(page.getByTestId('optimize-form-errors')).toContainText('Pick an ONNX folder below and press “Use as the simulated model”.');
    await expect(form.getByTestId('opt-onnx')).toContainText('onnxruntime-web runs it on WASM (this browser has no WebGPU)');
    await form.getByLabel('Open an ONNX model folder').setInputFiles(onnx);
    await expect(form.getByTestId('onnx-folder-info')).toContainText('TinyOnnx: ONNX, LlamaForCausalLM', { timeout: 120_000 });
    await form.getByRole('button', { name: 'Use as the simulated model' }).click();
    await expect(form.getByRole('button', { name: 'Use as the simulated model ✓' })).toHaveAttribute('aria-pressed', 'true');
    await form.getByLabel('Name (optional)').fill('onnx');
    await form.getByRole('button', { name: 'Start optimization' }).click();
    await expect(page.getByTestId('optimize-form-errors')).toHaveCount(0);
    await expect(page.getByTestId('optimize-progress')).toBeVisible();
    await expect(page.getByTestId('optimize-list')).toContainText('onnx:TinyOnnx');

    // A reload loses the folder's files: resuming says to pick the same folder again.
    await page.reload();
    const offer = page.getByTestId('optimize-interrupted');
    await expect(offer).toContainText('was running when the page closed', { timeout: 60_000 });
    await expect(offer.getByTestId('optimize-folder-needed')).toHaveText(
      'Its simulated model is the folder TinyOnnx, not open in this page (folders are not kept after a reload): pick the same folder again in the Optimize form (Simulated model: an ONNX folder) before resuming.',
    );
    await offer.getByRole('button', { name: 'Resume' }).click();
    const cut = page.getByRole('alert').filter({ hasText: 'Pick the same folder again' }).first();
    await expect(cut).toContainText(
      'onnx:TinyOnnx: the folder TinyOnnx is not open in this page (folders are not kept after a reload). Pick the same folder again in the Optimize form (Simulated model: an ONNX folder), then resume.',
      { timeout: 60_000 },
    );
    await snap(page, 'optimize-onnx-pick-again');

    await form.getByLabel('Simulated model').selectOption('onnx');
    await form.getByLabel('Open an ONNX model folder').setInputFiles(onnx);
    await expect(form.getByTestId('onnx-folder-info')).toContainText('TinyOnnx: ONNX', { timeout: 120_000 });
    await expect(page.getByTestId('optimize-folder-needed')).toHaveCount(0);
    await page.getByRole('button', { name: 'Try again (keeps what was scored)' }).click();
    await expect(page.getByTestId('optimize-progress')).toHaveCount(0, { timeout: 400_000 });
    await expect(page.getByTestId('optimize-list')).toContainText('done · onnx:TinyOnnx');
    const lineage = page.getByTestId('lineage');
    await expect(lineage.getByTestId('round-0').getByRole('button')).toHaveCount(1);
    await expect(lineage.getByTestId('round-1').getByRole('button')).toHaveCount(1);
    const scored = await cards(page);
    console.log(`[e2e] ONNX lineage: ${JSON.stringify(scored)}`);
    expect(scored.v0.split(' | ')[0]).toMatch(/^\d+\.\d$/);
    await snap(page, 'optimize-onnx-lineage');
    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
