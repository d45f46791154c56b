/**
 * The example in a real browser: Chromium (Debian's, driven by playwright-core) on the built
 * page, the server on a fresh SQLite file. Messages are answered and still there after a
 * reload; an edit makes a new branch and the old one comes back; a tool approval waits across
 * a reload and runs once; two pages on one chat answer one approval, and only one wins; a page
 * shows what another page of its chat sent, without a reload.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serviceListening, serviceUrl } from '@ckpt/test-servers';
import { CHROMIUM, chromiumFound, launchBrowser } from '@ckpt/test-stores/browser';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatServer, startServer } from '../src/server.js';
import { toolRuns } from '../src/tools.js';
import { removeStreamKeys } from './support/stream-keys.js';

const example = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ckpt-ai-chat-'));
const redisUrl = serviceUrl('redis');
const streamPrefix = `ckpt-test-ai-chat-${process.pid}`;
const redisUp = await serviceListening('redis');
/** How long a check waits for the page on a busy machine (vitest's default is one second). */
const SLOW = { timeout: 15_000 };

let server: ChatServer;
let chromium: Browser;
/** One browser profile, fresh for this run: its pages are the tabs of one person. */
let browser: BrowserContext;

beforeAll(async () => {
  if (!chromiumFound) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install it (apt-get install chromium) or set CKPT_CHROMIUM`,
    );
  }
  // The page, type-checked and built as `pnpm build` builds it.
  const bin = (name: string) => join(example, 'node_modules/.bin', name);
  execFileSync(bin('tsc'), ['-p', 'page/tsconfig.json'], { cwd: example, stdio: 'inherit' });
  execFileSync(bin('vite'), ['build'], { cwd: example, stdio: 'inherit' });
  server = await startServer({
    dbPath: join(dir, 'chats.db'),
    streams: redisUp ? { redisUrl, keyPrefix: streamPrefix } : undefined,
    // A part every 25 ms, as a model streams: long answers take a few seconds.
    wordDelayMs: 25,
  });
  chromium = await launchBrowser();
  browser = await chromium.newContext();
}, 180_000);

afterAll(async () => {
  await chromium?.close();
  await server?.close();
  if (redisUp) await removeStreamKeys(redisUrl, streamPrefix);
  rmSync(dir, { recursive: true, force: true });
});

/** The texts of the messages the page shows. */
async function shown(page: Page): Promise<string[]> {
  return page.getByTestId('message').getByTestId('text').allTextContents();
}

/** Open the chat `chatId` in a new page, loaded and ready. */
async function open(chatId: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${server.url}/?chat=${chatId}`);
  await page.getByTestId('input').waitFor();
  return page;
}

/** Send `text` and wait until the answer is in and the page is ready again. */
async function ask(page: Page, text: string): Promise<void> {
  const before = (await shown(page)).length;
  await page.getByTestId('input').fill(text);
  await page.getByTestId('send').click();
  await expect.poll(async () => (await shown(page)).length).toBeGreaterThanOrEqual(before + 2);
  await expect.poll(() => page.getByTestId('status').textContent()).toBe('ready');
}

describe('the chat example in Chromium', () => {
  let page: Page;

  it('answers messages and shows the history after a reload', async () => {
    page = await open('branches');
    await ask(page, 'hello');
    await ask(page, 'second');
    const history = ['hello', 'You said: hello', 'second', 'You said: second'];
    expect(await shown(page)).toEqual(history);
    await page.reload();
    await expect.poll(() => shown(page)).toEqual(history);
  });

  it('edits an earlier message into a new branch', async () => {
    await page.getByTestId('edit').first().click();
    await page.getByTestId('edit-input').fill('hello again');
    await page.getByTestId('edit-save').click();
    await expect.poll(() => shown(page)).toEqual(['hello again', 'You said: hello again']);
    await expect.poll(() => page.getByTestId('branch').first().textContent()).toBe('2/2');
    await page.reload();
    await expect.poll(() => shown(page)).toEqual(['hello again', 'You said: hello again']);
  });

  it('switches back to the old branch, whole', async () => {
    await page.getByTestId('branch').first().waitFor();
    await page.getByTestId('previous').first().click();
    const old = ['hello', 'You said: hello', 'second', 'You said: second'];
    await expect.poll(() => shown(page)).toEqual(old);
    await expect.poll(() => page.getByTestId('branch').first().textContent()).toBe('1/2');
    await page.reload();
    await expect.poll(() => shown(page)).toEqual(old);
    await page.close();
  });

  it('keeps a tool approval pending across a reload, and runs the tool once it is approved', async () => {
    const runs = toolRuns.weather;
    const tab = await open('approval');
    await tab.getByTestId('input').fill('What is the weather in Porto?');
    await tab.getByTestId('send').click();
    await tab.getByTestId('approve').waitFor();
    await tab.reload();
    await tab.getByTestId('approve').waitFor();
    expect(toolRuns.weather).toBe(runs);
    await tab.getByTestId('approve').click();
    await expect
      .poll(() => tab.getByTestId('tool').textContent())
      .toBe('Weather in Porto: sunny in Porto');
    await expect.poll(async () => (await shown(tab)).at(-1)).toBe('The tool said: sunny in Porto');
    expect(toolRuns.weather).toBe(runs + 1);
    await tab.reload();
    await expect
      .poll(() => tab.getByTestId('tool').textContent())
      .toBe('Weather in Porto: sunny in Porto');
    await tab.close();
  });

  it('shows each page of a chat what another page sent, without a reload', async () => {
    const first = await open('followed');
    const second = await open('followed');
    await ask(first, 'Hello from the first page');
    // The second page was not touched: the question and its answer arrive by themselves.
    await expect
      .poll(() => shown(second), SLOW)
      .toEqual(['Hello from the first page', 'You said: Hello from the first page']);
    await ask(second, 'And from the second');
    await expect.poll(async () => (await shown(first)).length, SLOW).toBe(4);
    expect(await shown(first)).toEqual(await shown(second));
    // Each page holds a connection open for the chat's events, and a browser opens six at
    // most to one host over HTTP/1.1: pages left open would hold back later requests.
    await Promise.all([first.close(), second.close()]);
  });

  it('lets only one of two pages on one chat answer the same approval', async () => {
    const runs = toolRuns.weather;
    const first = await open('two-pages');
    await first.getByTestId('input').fill('And the weather in Lisbon?');
    await first.getByTestId('send').click();
    await first.getByTestId('approve').waitFor();
    const second = await open('two-pages');
    await second.getByTestId('approve').waitFor();
    // Both pages show the approval; each answers it, at once.
    await Promise.all([first.getByTestId('approve').click(), second.getByTestId('deny').click()]);
    const refused = async () => [
      await first.getByTestId('error').count(),
      await second.getByTestId('error').count(),
    ];
    await expect.poll(refused).toEqual(expect.arrayContaining([0, 1]));
    const [firstRefused] = await refused();
    const loser = firstRefused ? first : second;
    expect(await loser.getByTestId('error').textContent()).toMatch(/already/);
    // Whichever won, both pages show its outcome after a reload, and the tool ran at most once.
    const approved = !firstRefused;
    const outcome = approved ? 'Weather in Lisbon: sunny in Lisbon' : 'Denied.';
    // The winning page runs the rest of the turn (the tool, then the answer); a reload before
    // that turn is saved would show it still waiting, which is not what is tested here.
    const winner = firstRefused ? second : first;
    await expect.poll(() => winner.getByTestId('tool').textContent(), SLOW).toBe(outcome);
    await expect.poll(() => winner.getByTestId('status').textContent(), SLOW).toBe('ready');
    for (const tab of [first, second]) {
      await tab.reload();
      await expect.poll(() => tab.getByTestId('tool').textContent(), SLOW).toBe(outcome);
    }
    expect(toolRuns.weather).toBe(runs + (approved ? 1 : 0));
    await Promise.all([first.close(), second.close()]);
  });

  it.skipIf(!redisUp)('picks an answer up where it is after a reload mid-answer', async () => {
    const tab = await open('resume');
    const question = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
    const answer = `You said: ${question}`;
    await tab.getByTestId('input').fill(question);
    await tab.getByTestId('send').click();
    // The answer has begun, and is far from done.
    await expect.poll(async () => (await shown(tab)).at(-1)).toMatch(/^You said: word0/);
    expect((await shown(tab)).at(-1)).not.toBe(answer);
    const resumed = tab.waitForResponse((r) => r.url().endsWith('/api/chat/resume/stream'));
    await tab.reload();
    // useChat({ resume: true }) asked for the answer, and it was still being written.
    expect((await resumed).status()).toBe(200);
    // The rest of the answer streams in (a few seconds).
    await expect.poll(() => shown(tab), { timeout: 15_000 }).toEqual([question, answer]);
    await expect.poll(() => tab.getByTestId('status').textContent()).toBe('ready');
    // Saved and done: a reload finds the answer in the chat, and nothing to resume.
    const nothing = tab.waitForResponse((r) => r.url().endsWith('/api/chat/resume/stream'));
    await tab.reload();
    expect((await nothing).status()).toBe(204);
    await expect.poll(() => shown(tab)).toEqual([question, answer]);
    await tab.close();
  });
});
