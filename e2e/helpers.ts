import { expect, type Page } from '@playwright/test';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ARTIFACTS = 'e2e/artifacts';

/** The test chat Llama's folder (config.json, model.safetensors, tokenizer.json with a chat template). */
export const CHAT_LLAMA = 'src/model/fixtures/hf/llama-chat';

/** A copy of the chat Llama's folder named `name`, without the files left out (and config.json changed by `config`). */
export function chatLlamaCopy(name: string, leaveOut: string[], config?: (text: string) => string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'lwm-hf-')), name);
  cpSync(CHAT_LLAMA, dir, { recursive: true, filter: (src) => !leaveOut.some((f) => src.endsWith(`/${f}`)) });
  if (config) writeFileSync(join(dir, 'config.json'), config(readFileSync(join(dir, 'config.json'), 'utf8')));
  return dir;
}

/** Saves a screenshot as a test artefact (kept in e2e/artifacts/, git-ignored). */
export async function snap(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = `${ARTIFACTS}/${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Where a picture of the README or docs/ goes: docs/screenshots/NAME.png only when asked (LWM_SCREENSHOTS=1, as
 * `npm run screenshots` sets), so a test run leaves the checkout clean; otherwise
 * e2e/artifacts/docs-NAME.png, taken the same way.
 */
export function docScreenshotPath(name: string): string {
  if (process.env.LWM_SCREENSHOTS === '1') return `docs/screenshots/${name}.png`;
  mkdirSync(ARTIFACTS, { recursive: true });
  return `${ARTIFACTS}/docs-${name}.png`;
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

export async function expectNoPageErrors(_page: Page, errors: string[]) {
  expect(errors, `page errors: ${errors.join('\n')}`).toEqual([]);
}

export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

/**
 * Opens the Train view and picks its custom run (the quick recipe is the default choice), then
 * waits for the default dataset to be listed.
 */
export async function openCustomTrainForm(page: Page): Promise<void> {
  await page.goto('./#/train');
  await expect(page.getByRole('heading', { name: 'Train', level: 1 })).toBeVisible();
  await page.getByRole('radio', { name: /^Custom run/ }).check();
  await expect(page.getByLabel('Dataset', { exact: true })).toContainText('Default dataset', { timeout: 120_000 });
}

/**
 * Trains a tiny SFT run (micro preset, terminal domain, 4 steps) through the Train view, as a
 * user would, and waits until it is done: the checkpoint the Playground and Bench specs use.
 */
export async function trainMicroSft(page: Page, options: { tokens: number; timeout: number }): Promise<void> {
  await openCustomTrainForm(page);
  await page.getByLabel('Domains').selectOption('terminal');
  await page.getByLabel('Stage').selectOption('sft');
  await page.getByLabel('Model preset').selectOption('micro');
  await page.getByLabel('Steps', { exact: true }).fill('4');
  await page.getByLabel('Batch').fill('2');
  await page.getByLabel('Tokens per sequence').fill(String(options.tokens));
  await page.getByLabel('Evaluate every').fill('4');
  await page.getByLabel('Judged samples').fill('0');
  await page.getByRole('button', { name: 'Start training' }).click();
  await expect(page.getByTestId('run-state')).toHaveText('done', { timeout: options.timeout });
}

/** A chat completions request as a mock server reads it. */
export interface ChatBody {
  model: string;
  stream?: boolean;
  messages: { role: string; content: string }[];
}

/**
 * An OpenAI-compatible chat completions server on 127.0.0.1 that lets the page in (CORS): each
 * request is answered with `reply(body, request)`, after `delayMs(body)` when given, streamed as
 * server-sent events when it asks (in pieces of `chunk` characters when given, else one).
 */
export async function chatServer(reply: (body: ChatBody, req: IncomingMessage) => string, o: { delayMs?: (body: ChatBody) => number; chunk?: number } = {}) {
  const server = createServer((req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Allow-Headers', 'content-type, authorization');
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    if (req.method === 'OPTIONS') return void res.writeHead(204).end();
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const body = JSON.parse(text) as ChatBody;
      const content = reply(body, req);
      const send = () => {
        if (body.stream) {
          res.writeHead(200, { 'Content-Type': 'text/event-stream' });
          const step = o.chunk ?? Math.max(1, content.length);
          for (let i = 0; i < content.length; i += step)
            res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: content.slice(i, i + step) } }] })}\n\n`);
          res.end('data: [DONE]\n\n');
        } else {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }));
        }
      };
      const delay = o.delayMs?.(body) ?? 0;
      if (delay > 0) setTimeout(send, delay);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    /** Cuts every open connection now (a server gone mid-run). */
    closeAllConnections: () => server.closeAllConnections(),
    close: () => (server.closeAllConnections(), new Promise<void>((r) => server.close(() => r()))),
  };
}
