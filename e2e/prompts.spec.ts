import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { collectPageErrors, forbidForeignRequests, snap } from './helpers.ts';

/**
 * Replaces text in a Monaco editor through its own find/replace widget, as a user would. Each step
 * waits for the widget to say it has done it: Monaco keeps a closed widget in the page (moved out
 * of view, still fillable), and under load a step that runs on the closed one changes nothing.
 */
async function replaceInEditor(page: Page, editor: ReturnType<Page['getByTestId']>, find: string, replace: string) {
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+H');
  const widget = editor.locator('.find-widget.visible.replaceToggled');
  await expect(widget).toBeVisible();
  const findInput = widget.getByRole('textbox', { name: 'Find' });
  const count = widget.locator('.matchesCount');
  await findInput.fill('');
  await findInput.fill(find);
  await expect(count).toHaveText(/ of \d+/);
  await widget.getByRole('textbox', { name: 'Replace' }).fill(replace);
  const replaceAll = widget.getByRole('button', { name: /Replace All/ });
  // The replaced text no longer matches (a change of case would: Monaco's find ignores case).
  // Under CI's load a click on Replace All has been lost once with the matches showing; clicking
  // again is safe, as a second Replace All finds nothing left to replace.
  if (!replace.toLowerCase().includes(find.toLowerCase())) {
    await expect(async () => {
      await replaceAll.click();
      await expect(count).toHaveText('No results', { timeout: 5_000 });
    }).toPass({ timeout: 60_000 });
  } else await replaceAll.click();
  await page.keyboard.press('Escape');
  await expect(editor.locator('.find-widget.visible')).toHaveCount(0);
}

test('Monaco loads only with the Prompts view, from this site, workers included', async ({ page }) => {
  const requests: string[] = [];
  const workers: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('worker', (w) => workers.push(w.url()));
  const foreign = forbidForeignRequests(page);
  await page.goto('./#/data');
  await expect(page.getByTestId('stats-table')).toBeVisible({ timeout: 120_000 });
  expect(requests.filter((u) => /monacoSetup|editor\.worker|json\.worker/.test(u))).toEqual([]);
  await page.getByRole('link', { name: 'Prompts', exact: true }).click();
  await expect(page.getByTestId('template-editor')).toHaveAttribute('data-ready', 'true', { timeout: 60_000 });
  expect(requests.some((u) => /monacoSetup-[\w-]+\.js$/.test(u))).toBe(true);
  await expect.poll(() => workers.some((u) => /editor\.worker/.test(u))).toBe(true);
  expect(workers.every((u) => u.startsWith('http://127.0.0.1'))).toBe(true);
  expect(foreign).toEqual([]);
});

test('edit a template and watch the preview; save it as a version and diff it against v0', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto('./#/prompts');
  const editor = page.getByTestId('template-editor');
  await expect(editor).toHaveAttribute('data-ready', 'true', { timeout: 120_000 });
  const preview = page.getByTestId('preview-text');
  await expect(preview).toContainText('You are the environment.', { timeout: 60_000 });
  await expect(page.getByTestId('preview-target')).not.toBeEmpty();
  await expect(page.getByTestId('preview-tokens')).toHaveText(/^[\d,]+ tokens$/);
  const tokensBefore = await page.getByTestId('preview-tokens').textContent();
  // Template variables are highlighted by the template language.
  await expect(editor.locator('.view-line', { hasText: 'task_description' }).first()).toBeVisible();

  await replaceInEditor(page, editor, 'You are the environment.', 'You are the terminal, the web and every other world at once.');
  await expect(preview).toContainText('You are the terminal, the web and every other world at once.');
  await expect(preview).not.toContainText('You are the environment.');
  await expect(page.getByTestId('preview-tokens')).not.toHaveText(tokensBefore!);

  // An unknown variable is named, with its line, marked in the text, and the preview waits for a fix.
  await replaceInEditor(page, editor, '{{ turn.action }}', '{{ acton }}');
  await expect(page.getByTestId('template-problems')).toContainText('unknown variable "acton"');
  await expect(page.getByTestId('template-problems')).toContainText(/line \d+/);
  await expect(editor.locator('.squiggly-error').first()).toBeAttached();
  await expect(page.getByText("Fix the template's problems to see the preview.")).toBeVisible();
  await replaceInEditor(page, editor, '{{ acton }}', '{{ turn.action }}');
  await expect(page.getByTestId('template-problems')).toHaveCount(0);

  // A broken block is a syntax problem on its line.
  await replaceInEditor(page, editor, '{% endfor %}', '{% endif %}');
  await expect(page.getByTestId('template-problems')).toContainText('{% endfor %} was expected');
  await replaceInEditor(page, editor, '{% endif %}\n<|action|>', '{% endfor %}\n<|action|>');
  await expect(page.getByTestId('template-problems')).toHaveCount(0);

  // Completion offers the variable names inside a tag.
  await replaceInEditor(page, editor, '{{ demonstrations }}', '{{ demo }}');
  await expect(page.getByTestId('template-problems')).toContainText('unknown variable "demo"');
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+F');
  await editor.getByRole('textbox', { name: 'Find' }).fill('{{ demo');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Escape');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Control+Space');
  await expect(page.locator('.suggest-widget')).toContainText('demonstrations');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('template-problems')).toHaveCount(0);
  await expect(preview).toContainText('You are the terminal, the web and every other world at once.');
  await snap(page, 'prompts-template');

  await page.getByLabel('Note for the new version').fill('names the simulated worlds');
  await page.getByRole('button', { name: 'Save as new version' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved as v3' })).toBeVisible();
  // The saved version renders in the preview.
  await expect(page.getByLabel('Start from')).toHaveValue('v3');
  await expect(preview).toContainText('You are the terminal, the web and every other world at once.');
  await expect(page.getByTestId('preview-target')).not.toBeEmpty();
  const versions = page.getByTestId('versions');
  await expect(versions.locator('tr', { hasText: 'names the simulated worlds' })).toContainText('v0');

  await expect(page.getByLabel('Original')).toHaveValue('v0');
  await expect(page.getByLabel('Modified')).toHaveValue('v3');
  const diff = page.getByTestId('diff-editor');
  await diff.scrollIntoViewIfNeeded();
  await expect(diff).toHaveAttribute('data-ready', 'true');
  await expect(diff.locator('.monaco-diff-editor')).toBeVisible();
  await expect(diff.locator('.char-insert, .line-insert').first()).toBeAttached({ timeout: 30_000 });
  await snap(page, 'prompts-diff');

  // The stage mix takes the new version and refuses an all-zero mix.
  await page.getByLabel('SFT weight of v3').fill('2');
  await page.getByLabel('CPT weight of v0').fill('0');
  await expect(page.getByRole('alert').filter({ hasText: 'the weights sum to 0' })).toBeVisible();

  // Versions and the stage mix survive a reload.
  await page.reload();
  await expect(page.getByTestId('versions')).toContainText('names the simulated worlds');
  await expect(page.getByLabel('SFT weight of v3')).toHaveValue('2');
  await expect(page.getByLabel('CPT weight of v0')).toHaveValue('1');
  expect(errors).toEqual([]);
});

test('import a folder of DOMAIN/system_prompt.txt files as one version with a text per domain', async ({ page }) => {
  const errors = collectPageErrors(page);
  const dir = mkdtempSync(join(tmpdir(), 'lwm-prompts-'));
  for (const [domain, text] of [
    ['mcp', 'You are a tool server for a {domain} agent.\nTools:\n{tool_definitions}\nReturn JSON like {"result": 1}.\n'],
    ['web', 'You render web pages.\n'],
  ]) {
    mkdirSync(join(dir, domain));
    writeFileSync(join(dir, domain, 'system_prompt.txt'), text);
  }
  await page.goto('./#/prompts');
  const editor = page.getByTestId('template-editor');
  await expect(editor).toHaveAttribute('data-ready', 'true', { timeout: 120_000 });
  await expect(page.getByTestId('preview-text')).toContainText('You are the environment.', { timeout: 60_000 });
  await page.getByTestId('import-prompt-folder').setInputFiles(dir);
  await expect(page.getByRole('status').filter({ hasText: 'Imported 2 domain prompts as v3' })).toBeVisible();
  await expect(page.getByLabel('Start from')).toHaveValue('v3');
  // The default dataset's first trajectory is an mcp one: the preview shows the imported text with the fields in place.
  await page.getByLabel('Text for').selectOption('mcp');
  await expect(editor.locator('.view-line', { hasText: 'You are a tool server' }).first()).toBeVisible();
  await expect(page.getByTestId('preview-text')).toContainText('You are a tool server for a mcp agent.');
  await expect(page.getByTestId('preview-text')).toContainText('Return JSON like {"result": 1}.');
  await expect(page.getByTestId('versions')).toContainText('imported per-domain prompts: mcp, web');
  // A folder with an unknown placeholder is refused, naming the file and line.
  writeFileSync(join(dir, 'web', 'system_prompt.txt'), 'ok\n{page_source}\n');
  await page.getByTestId('import-prompt-folder').setInputFiles(dir);
  await expect(page.getByTestId('import-problems')).toContainText('web/system_prompt.txt: line 2: unknown placeholder {page_source}');
  expect(errors).toEqual([]);
});

test('raw-trajectory mode: broken JSON and schema errors show as markers; only valid JSON saves', async ({ page }) => {
  const errors = collectPageErrors(page);
  await page.goto('./#/prompts');
  await page.getByRole('link', { name: 'Raw trajectory' }).click();
  await expect(page).toHaveURL(/#\/prompts\/raw$/);
  const editor = page.getByTestId('raw-editor');
  await expect(editor).toHaveAttribute('data-ready', 'true', { timeout: 120_000 });
  await expect(page.getByTestId('raw-valid')).toBeVisible({ timeout: 60_000 });
  const save = page.getByRole('button', { name: 'Save trajectory' });

  // Break the JSON: a stray brace at the end.
  await editor.locator('.view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('}');
  await expect(page.getByTestId('raw-problems')).toContainText('JSON syntax');
  await expect(editor.locator('.squiggly-error').first()).toBeAttached();
  await expect(save).toBeDisabled();
  await snap(page, 'prompts-raw-error');
  await page.keyboard.press('Control+Z');
  await expect(page.getByTestId('raw-valid')).toBeVisible();

  // Valid JSON, invalid trajectory: the schema validator's errors land on their lines.
  await replaceInEditor(page, editor, '"observation":', '"observaton":');
  await expect(page.getByTestId('raw-problems')).toContainText('missing required field');
  await expect(page.getByTestId('raw-problems')).toContainText('unknown field');
  await expect(save).toBeDisabled();

  // Fixing it and changing a value saves; the viewer shows the edit.
  await replaceInEditor(page, editor, '"observaton":', '"observation":');
  await replaceInEditor(page, editor, 'Model Context Protocol', 'MODEL CONTEXT PROTOCOL');
  await expect(page.getByTestId('raw-valid')).toBeVisible();
  await save.click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved' })).toBeVisible();
  await page.getByRole('link', { name: 'View in Trajectories →' }).click();
  await expect(page.getByTestId('trajectory-detail')).toContainText('MODEL CONTEXT PROTOCOL');
  // The editor is gone. Monaco's own cancellation error, which disposing an editor can leave
  // unawaited, is not a page error; any other unhandled rejection still is.
  await page.evaluate(() => {
    const canceled = new Error('Canceled');
    canceled.name = 'Canceled';
    void Promise.reject(canceled);
    void Promise.reject(new Error('a real failure'));
  });
  await expect.poll(() => errors).toEqual(['a real failure']);
});
