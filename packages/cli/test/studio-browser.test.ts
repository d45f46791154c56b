/**
 * `ckpt studio` in a browser: the built command serving a store, a headless Chromium looking
 * at it as a person would, on SQLite and PostgreSQL, on the demo's store and on a store this
 * test fills; live, by the store's watch alone (the poll an hour away). Also measures (and prints, never asserts) how long a session of 10,000
 * checkpoints and the first page of a catalog of 100,000 sessions take to draw.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CheckpointStore,
  type ExportedCheckpoint,
  type JsonValue,
  openStore,
} from '@ckpt/core';
import { serviceAvailable } from '@ckpt/test-servers';
import { emptyStore, URL_STORES } from '@ckpt/test-stores';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from './support/binary.js';
import { runDemo } from './support/demo.js';
import { CHROMIUM, launchBrowser, type StudioProcess, startStudio } from './support/studio.js';
import { screenshotDemo } from './support/studio-screenshot.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-studio-browser-'));

const haveChromium = await serviceAvailable(
  `Chromium at ${CHROMIUM} (apt-get install chromium, or set CKPT_CHROMIUM)`,
  async () => {
    if (!existsSync(CHROMIUM)) throw new Error('not installed');
  },
);

let browser: Browser;
beforeAll(async () => {
  buildCli();
  if (haveChromium) browser = await launchBrowser();
}, 300_000);
afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A page of its own (cookies and all) on `studio`, past the first visit that sets the cookie;
 * `close` checks that the page raised no error.
 */
async function open(studio: StudioProcess): Promise<{ page: Page; close(): Promise<void> }> {
  const context: BrowserContext = await browser.newContext({
    viewport: { width: 1280, height: 900 },
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(studio.url);
  expect(new URL(page.url()).search).toBe('');
  return {
    page,
    close: async () => {
      await context.close();
      expect(errors).toEqual([]);
    },
  };
}

/** What a session's tree shows for `seq`: its classes (active, inactive, head, …), or null when it is not drawn. */
async function nodeClasses(page: Page, seq: number): Promise<string[] | null> {
  const node = page.locator(`svg.tree [data-seq="${seq}"]`);
  if ((await node.count()) === 0) return null;
  return ((await node.getAttribute('class')) ?? '').split(' ').filter(Boolean);
}

/** Wait until `seq` is drawn with `cls`. */
const nodeWith = (page: Page, seq: number, cls: string) =>
  page.locator(`svg.tree [data-seq="${seq}"].${cls}`).waitFor();

/** When the page set `mark`, in ms since it began to load. */
async function drawnAt(page: Page, mark: string): Promise<number> {
  await page.waitForFunction((name) => performance.getEntriesByName(name).length > 0, mark);
  return page.evaluate((name) => performance.getEntriesByName(name)[0]!.startTime, mark);
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 2));

/**
 * The store the tests look at: `agent`, 40 checkpoints each saying a question and an answer
 * (and a tool result as plain JSON at the start), rolled back to 35 and gone on with 41 and
 * 42, so that 36..40 is an abandoned branch; `agent-fork`, forked from it at 20; 55 other
 * sessions, so that the catalog has more than a page; and a state scope.
 */
async function fillAgent(store: CheckpointStore): Promise<void> {
  for (let i = 0; i < 55; i++) {
    await store.checkpoint(`other-${String(i).padStart(2, '0')}`, { i });
  }
  await pause();
  const say = (i: number): JsonValue[] => [
    { role: 'user', text: `question ${i}` },
    { role: 'assistant', text: `answer ${i}` },
  ];
  for (let i = 1; i <= 40; i++) {
    await store.checkpoint(
      'agent',
      { step: i, notes: i % 2 === 0 ? ['even'] : ['odd', i] },
      {
        metadata: { step: i },
        transcript: i === 1 ? [{ tool: 'search', result: { hits: 3 } }, ...say(i)] : say(i),
      },
    );
  }
  await store.rollback('agent', 35);
  for (const i of [41, 42]) {
    await store.checkpoint(
      'agent',
      { step: i, notes: ['after the rollback'] },
      { metadata: { step: i }, transcript: say(i) },
    );
  }
  await pause();
  await store.fork('agent', { atSeq: 20, newId: 'agent-fork' });
  await store.checkpoint(
    'agent-fork',
    { step: 'forked' },
    { transcript: [{ role: 'user', text: 'another way' }] },
  );
  await store.state('prefs').set('theme', 'dark');
  await store.state('prefs').set('limits', { tokens: 1000 });
}

const BACKENDS = URL_STORES.filter((s) => s.name === 'sqlite' || s.name === 'postgres');

describe.runIf(haveChromium).each(BACKENDS)('ckpt studio in a browser on $name', (backend) => {
  const url = backend.url('cli_studio_browser', dir);
  let store: CheckpointStore;
  let readOnly: StudioProcess;
  let writable: StudioProcess;

  beforeAll(async () => {
    store = await openStore(url);
    await emptyStore(store, ['prefs']);
    await fillAgent(store);
    // The poll an hour away: what the pages show live comes by the store's watch (both stores
    // have a change log), which tells the studio of each change as it commits.
    const live = ['--poll', '1h'];
    [readOnly, writable] = await Promise.all([
      startStudio(url, live),
      startStudio(url, ['--write', ...live]),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([readOnly?.stop(), writable?.stop()]);
    await emptyStore(store, ['prefs']);
    await store.close();
  });

  it('lists the sessions newest first, fifty at a time, and loads the next page at the end of the list', async () => {
    const { page, close } = await open(readOnly);
    const rows = page.locator('table.sessions tbody tr');
    await rows.nth(49).waitFor();
    expect(await rows.count()).toBe(50);
    const firstPage = (await store.sessions({ limit: 50 })).items.map((s) => s.sessionId);
    expect(
      await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-session'))),
    ).toEqual(firstPage);
    await expect
      .poll(() => page.locator('tr[data-session="agent-fork"] td').nth(3).textContent())
      .toBe('agent at 20');
    await rows.nth(49).scrollIntoViewIfNeeded();
    await rows.nth(56).waitFor();
    expect(await rows.count()).toBe(57);
    await expect.poll(() => page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    await close();
  });

  it('finds sessions by the start of their id, pages within them, and follows only those live', async () => {
    const { page, close } = await open(readOnly);
    const rows = page.locator('table.sessions tbody tr');
    const shown = () => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-session')));
    const matching = async () =>
      (await store.sessions({ prefix: 'other-', limit: 100 })).items.map((s) => s.sessionId);
    await rows.nth(49).waitFor();
    await page.getByLabel('search by id prefix').fill('other-');
    await page.waitForURL(/\/\?prefix=other-$/);
    await expect.poll(shown).toEqual((await matching()).slice(0, 50));
    // Only a session with the prefix makes the list read again: another one changes nothing.
    const reads: string[] = [];
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === '/api/sessions') reads.push(req.url());
    });
    await store.checkpoint('zz-elsewhere', { elsewhere: true });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(reads).toEqual([]);
    expect(await page.locator('.note-stale').count()).toBe(0);
    await store.checkpoint('other-live', { fresh: true });
    await rows.first().and(page.locator('tr[data-session="other-live"]')).waitFor();
    expect(reads).toHaveLength(1);
    // The next pages are of the sessions with the prefix alone.
    await rows.nth(49).scrollIntoViewIfNeeded();
    await rows.nth(55).waitFor();
    await expect.poll(() => page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    expect(await shown()).toEqual(await matching());
    expect(await rows.count()).toBe(56);
    await Promise.all([store.delete('zz-elsewhere'), store.delete('other-live')]);
    await close();
  });

  it("filters the catalog by tags typed beside the search, pages within them, follows them live, and shows a session's tags", async () => {
    // Tags set alone keep every session in its place in the catalog, for the other tests.
    const others = (await store.sessions({ prefix: 'other-', limit: 100 })).items;
    for (const [i, s] of others.entries()) {
      await store.setTags(s.sessionId, i < 5 ? { team: 'red', status: 'open' } : { team: 'red' });
    }
    await store.setTags('agent', { team: 'blue', status: 'open', note: 'on hold' });
    const { page, close } = await open(readOnly);
    try {
      const rows = page.locator('table.sessions tbody tr');
      const shown = () =>
        rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-session')));
      const matching = async (where: Record<string, string>, prefix = '') =>
        (await store.sessions({ where, prefix, limit: 100 })).items.map((s) => s.sessionId);
      const input = page.getByLabel('filter by tag (key=value)');
      await rows.nth(49).waitFor();

      await input.fill('team=red');
      await input.press('Enter');
      await page.waitForURL(/\/\?where=team%3Dred$/);
      await expect.poll(shown).toEqual((await matching({ team: 'red' })).slice(0, 50));
      // The next page is of the sessions with the tag alone.
      await rows.nth(49).scrollIntoViewIfNeeded();
      await rows.nth(54).waitFor();
      await expect.poll(() => page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
      expect(await shown()).toEqual(await matching({ team: 'red' }));

      // A second tag narrows it; the search by id prefix goes with it.
      await input.fill('status=open');
      await input.press('Enter');
      await page.waitForURL(/\/\?where=team%3Dred&where=status%3Dopen$/);
      await expect.poll(shown).toEqual(await matching({ team: 'red', status: 'open' }));
      expect(await shown()).toHaveLength(5);
      const first = others[0]!.sessionId;
      await page.getByLabel('search by id prefix').fill(first);
      await page.waitForURL(new RegExp(`prefix=${first}&where=team%3Dred&where=status%3Dopen$`));
      await expect.poll(shown).toEqual([first]);
      await page.getByLabel('search by id prefix').fill('');
      await expect.poll(shown).toHaveLength(5);

      // Only a change to a session with the tags makes the list read again.
      const reads: string[] = [];
      page.on('request', (req) => {
        if (new URL(req.url()).pathname === '/api/sessions') reads.push(req.url());
      });
      await store.checkpoint('zz-untagged', { elsewhere: true });
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(reads).toEqual([]);
      await store.checkpoint('tagged-live', 1, { tags: { team: 'red', status: 'open' } });
      await rows.first().and(page.locator('tr[data-session="tagged-live"]')).waitFor();
      expect(reads).toHaveLength(1);

      // A tag taken away widens it again; a tag clicked in a row is added (in place of
      // another value of its key).
      await page.getByRole('button', { name: 'remove the tag filter team=red' }).click();
      await page.waitForURL(/\/\?where=status%3Dopen$/);
      await expect.poll(shown).toEqual(await matching({ status: 'open' }));
      expect(await shown()).toContain('agent');
      await page.locator('tr[data-session="agent"] a.chip', { hasText: 'team=blue' }).click();
      await page.waitForURL(/\/\?where=status%3Dopen&where=team%3Dblue$/);
      await expect.poll(shown).toEqual(['agent']);
      expect(await page.locator('tr[data-session="agent"] td.tags-cell').textContent()).toBe(
        'note=on holdstatus=openteam=blue',
      );

      // What cannot be a tag: said beside the box, or by the server, naming where.
      await input.fill('nonsense');
      await input.press('Enter');
      expect(await page.locator('.tag-problem').textContent()).toBe(
        'A tag is key=value, such as user=ann.',
      );
      await input.fill('bad key=x');
      await input.press('Enter');
      await expect
        .poll(() => page.locator('.note-error').textContent())
        .toMatch(/^INVALID_ARGUMENT where: a tag key is 1 to 64/);
      await page.getByRole('button', { name: 'remove the tag filter bad key=x' }).click();
      // The list read again without it: the error goes.
      await expect.poll(() => page.locator('.note-error').count()).toBe(0);
      expect(await shown()).toEqual(['agent']);

      // A filter nothing matches says so.
      await page.goto(`${readOnly.origin}/?where=team%3Dgreen`);
      await expect
        .poll(() => page.locator('p.empty').textContent())
        .toBe('No session has the tag team=green.');

      // A session's page shows its tags, each a link to the sessions that have it.
      await page.goto(`${readOnly.origin}/sessions/agent`);
      const tags = page.locator('.session-tags a.chip');
      await tags.first().waitFor();
      expect(await tags.allTextContents()).toEqual(['note=on hold', 'status=open', 'team=blue']);
      await tags.nth(2).click();
      await page.waitForURL(/\/\?where=team%3Dblue$/);
      await expect.poll(shown).toEqual(['agent']);
    } finally {
      await close();
      for (const s of others) await store.setTags(s.sessionId, {});
      await store.setTags('agent', {});
      await Promise.all([store.delete('zz-untagged'), store.delete('tagged-live')]);
    }
  });

  it('draws the tree: the active timeline, the abandoned branch, the head, and the fork as a link', async () => {
    const { page, close } = await open(readOnly);
    await page.locator('tr[data-session="agent"] a').click();
    await nodeWith(page, 42, 'head');
    expect(await nodeClasses(page, 42)).toEqual(expect.arrayContaining(['node', 'active', 'head']));
    for (const seq of [1, 35, 41])
      expect(await nodeClasses(page, seq), `${seq}`).toContain('active');
    for (const seq of [36, 37, 38, 39, 40])
      expect(await nodeClasses(page, seq), `${seq}`).toContain('inactive');
    // The long plain runs of the timeline are folded, and open on a click.
    expect(await nodeClasses(page, 10)).toBeNull();
    const gaps = page.locator('svg.tree .gap');
    expect(await gaps.count()).toBe(2);
    await gaps.first().click();
    await nodeWith(page, 10, 'active');
    // The fork: a link on the checkpoint it was taken at, to the other session, which links back.
    const fork = page.locator('svg.tree [data-seq="20"] a.fork-link');
    expect(await fork.textContent()).toBe('agent-fork');
    await fork.click();
    await page.waitForURL(/\/sessions\/agent-fork$/);
    await nodeWith(page, 21, 'head');
    const back = page.locator('svg.tree [data-seq="20"] a.fork-link');
    expect(await back.textContent()).toBe('agent');
    expect(await page.locator('.session-head').textContent()).toMatch(/forked from agent at 20/);
    await close();
  });

  it('shows a checkpoint when clicked, with its diff against its parent and against another picked in the tree', async () => {
    const { page, close } = await open(readOnly);
    await page.goto(`${readOnly.origin}/sessions/agent`);
    await page.locator('svg.tree [data-seq="38"]').click();
    await page.getByRole('heading', { name: 'Checkpoint 38' }).waitFor();
    await page.getByText('Changes since checkpoint 37 (its parent)').waitFor();
    const changes = page.locator('ul.diff li');
    await changes.first().waitFor();
    expect(
      await changes.evaluateAll((lis) =>
        lis.map((li) => [li.dataset.op, li.dataset.path, li.textContent]),
      ),
    ).toEqual([
      ['change', 'data.step', '~data.step37→38'],
      ['change', 'data.notes[0]', '~data.notes[0]"odd"→"even"'],
      ['remove', 'data.notes[1]', '−data.notes[1]37'],
      ['change', 'metadata.step', '~metadata.step37→38'],
    ]);
    expect(await page.locator('section.checkpoint .json').nth(1).textContent()).toContain(
      'step: 38',
    );
    // Another checkpoint, picked in the tree.
    await page.getByRole('button', { name: 'Compare with another checkpoint' }).click();
    await page.locator('svg.tree [data-seq="42"]').click();
    await page.getByText('Changes since checkpoint 42 (picked)').waitFor();
    await expect
      .poll(() => changes.evaluateAll((lis) => lis.map((li) => li.dataset.path)))
      .toEqual(['data.step', 'data.notes[0]', 'metadata.step']);
    expect(new URL(page.url()).search).toBe('?seq=38&vs=42');
    expect(await nodeClasses(page, 42)).toContain('compared');
    expect(await nodeClasses(page, 38)).toContain('selected');
    await close();
  });

  it('pages the transcript of the active timeline backward, each item by its kind', async () => {
    const { page, close } = await open(readOnly);
    await page.goto(`${readOnly.origin}/sessions/agent?tab=transcript`);
    const items = page.locator('section.transcript li.item');
    await items.nth(49).waitFor();
    expect(await items.count()).toBe(50);
    expect(await items.last().locator('.text').textContent()).toBe('answer 42');
    expect(await items.last().locator('.role').textContent()).toBe('assistant');
    await page.getByRole('button', { name: 'Load older' }).click();
    // 1..35, 41 and 42 said two items each; checkpoint 1 a tool result too.
    await items.nth(74).waitFor();
    expect(await items.count()).toBe(75);
    await expect.poll(() => page.getByRole('button', { name: 'Load older' }).count()).toBe(0);
    expect(await items.first().locator('.json').textContent()).toMatch(/tool: "search"/);
    expect(await items.nth(1).textContent()).toMatch(/userquestion 1$/);
    const seqs = await items.evaluateAll((lis) =>
      lis.map((li) => Number(li.getAttribute('data-seq'))),
    );
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(seqs).not.toContain(36);
    await close();
  });

  it('rolls back with --write after a confirmation that says what it will do; the store and the view follow', async () => {
    const { page, close } = await open(writable);
    await page.goto(`${writable.origin}/sessions/agent`);
    await page.locator('svg.tree [data-seq="38"]').click();
    await page.getByRole('button', { name: 'Roll back to 38' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.locator('.confirm-message').textContent()).toBe(
      'Move the head of session "agent" from checkpoint 42 to checkpoint 38. Nothing is deleted: rolling forward to 42 again works.',
    );
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await store.head('agent')).toBe(42);
    await page.getByRole('button', { name: 'Roll back to 38' }).click();
    await dialog.getByRole('button', { name: 'Roll back to 38' }).click();
    await nodeWith(page, 38, 'head');
    expect(await store.head('agent')).toBe(38);
    expect(await nodeClasses(page, 42)).toContain('inactive');
    expect(await page.getByRole('status').textContent()).toBe(
      'Rolled back: the head of "agent" is now checkpoint 38.',
    );
    // An agent writes on from there: the note no longer says the head is at 38.
    const written = await store.checkpoint('agent', { step: 'after the studio rolled back' });
    await nodeWith(page, written.seq, 'head');
    expect(await page.getByRole('status').textContent()).toBe(
      `Rolled back "agent" to checkpoint 38; the head has moved since, and is now checkpoint ${written.seq}.`,
    );
    await store.rollback('agent', 42);
    await nodeWith(page, 42, 'head');
    await close();
  });

  it('shows a browser that comes without the token how to get in', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const answer = await page.goto(`${readOnly.origin}/sessions/agent`);
      expect(answer?.status()).toBe(401);
      expect(await page.getByRole('heading').textContent()).toBe('ckpt studio needs its token');
      expect(await page.locator('body').textContent()).toMatch(
        /Open the address that ckpt studio printed where it was started/,
      );
    } finally {
      await context.close();
    }
  });

  it('offers no change without --write', async () => {
    const { page, close } = await open(readOnly);
    await page.goto(`${readOnly.origin}/sessions/agent?seq=38`);
    await page.getByRole('heading', { name: 'Checkpoint 38' }).waitFor();
    await page.locator('ul.diff li').first().waitFor();
    for (const name of [/Roll back/, /Fork at/, /Prune/, /Delete/]) {
      expect(await page.getByRole('button', { name }).count(), String(name)).toBe(0);
    }
    expect(await page.locator('.mode').textContent()).toMatch(/read-only/);
    await page.goto(`${readOnly.origin}/state/prefs`);
    await page.locator('tr[data-key="theme"]').waitFor();
    expect(await page.getByRole('button', { name: /Set|Delete/ }).count()).toBe(0);
    await close();
  });

  it('shows the state: scopes, keys and values, and sets a value with --write', async () => {
    const { page, close } = await open(writable);
    await page.goto(`${writable.origin}/state`);
    await page.getByRole('link', { name: 'prefs' }).click();
    await page.locator('tr[data-key="theme"]').waitFor();
    expect(
      await page.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.textContent)),
    ).toEqual([
      expect.stringMatching(/^limits▾\{tokens: 1000\}/),
      expect.stringMatching(/^theme"dark"/),
    ]);
    await page.getByLabel('key').fill('mood');
    await page.getByLabel('value (JSON)').fill('{"calm": true}');
    await page.getByRole('button', { name: 'Set…' }).click();
    expect(await page.locator('dialog .confirm-message').textContent()).toBe(
      'Set key "mood" of scope "prefs" to {"calm":true}, replacing any value it has.',
    );
    await page.getByRole('dialog').getByRole('button', { name: 'Set' }).click();
    await page.locator('tr[data-key="mood"]').waitFor();
    expect(await store.state('prefs').get('mood')).toEqual({ calm: true });
    await store.state('prefs').delete('mood');
    await close();
  });

  it('shows a checkpoint written by another process, and a new session, without a reload, as the watch tells it', async () => {
    const { page, close } = await open(readOnly);
    await page.goto(`${readOnly.origin}/sessions/agent`);
    await nodeWith(page, 42, 'head');
    const written = await store.checkpoint(
      'agent',
      { step: 43 },
      { transcript: [{ role: 'assistant', text: 'live' }] },
    );
    await nodeWith(page, written.seq, 'head');
    expect(await nodeClasses(page, 42)).not.toContain('head');
    await page.getByRole('link', { name: 'Sessions' }).first().click();
    await page.locator('tr[data-session="agent"]').waitFor();
    await store.checkpoint('live-new', { fresh: true });
    await page
      .locator('tbody tr')
      .first()
      .and(page.locator('tr[data-session="live-new"]'))
      .waitFor();
    await store.delete('live-new');
    await store.rollback('agent', 42);
    await close();
  });
});

describe.runIf(haveChromium)("ckpt studio on the demo's store", () => {
  const url = `sqlite:${join(dir, 'demo.db')}`;
  let studio: StudioProcess;

  beforeAll(async () => {
    runDemo(url);
    studio = await startStudio(url);
  }, 120_000);
  afterAll(() => studio?.stop());

  it("lists the demo's two sessions and draws the session with its abandoned step and its fork", async () => {
    const { page, close } = await open(studio);
    const rows = page.locator('table.sessions tbody tr');
    await rows.nth(1).waitFor();
    expect(
      await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-session'))),
    ).toEqual(['trip-planner-porto', 'trip-planner']);
    await page.getByRole('link', { name: 'trip-planner', exact: true }).click();
    await nodeWith(page, 4, 'head');
    expect(await nodeClasses(page, 3)).toContain('inactive');
    expect(await page.locator('svg.tree [data-seq="2"] a.fork-link').textContent()).toBe(
      'trip-planner-porto',
    );
    await close();
  });

  it('takes the picture the README shows', async () => {
    const { page, close } = await open(studio);
    const file = join(dir, 'studio.png');
    await screenshotDemo(page, studio.origin, file);
    expect(readFileSync(file).subarray(1, 4).toString()).toBe('PNG');
    await close();
  });
});

describe.runIf(haveChromium)('ckpt studio on a large store (times printed, not asserted)', () => {
  const sessionUrl = `sqlite:${join(dir, 'large-session.db')}`;
  const catalogUrl = `sqlite:${join(dir, 'large-catalog.db')}`;

  beforeAll(async () => {
    const now = Date.now();
    // One session of 10,000 checkpoints in a line, with a branch of three off 5,000.
    const big = await openStore(`${sessionUrl}?synchronous=off`);
    function* checkpoints(): Generator<ExportedCheckpoint> {
      for (let seq = 1; seq <= 10_003; seq++) {
        const parent = seq === 1 ? null : seq === 10_001 ? 5000 : seq - 1;
        yield {
          seq,
          parent,
          data: { step: seq },
          metadata: { step: seq },
          transcript: [],
          createdAt: new Date(now - 20_000 + seq),
        };
      }
    }
    await big.importSession({
      sessionId: 'big',
      head: 10_000,
      forkedFrom: null,
      createdAt: new Date(now - 20_000),
      updatedAt: new Date(now),
      checkpoints: checkpoints(),
    });
    await big.close();
    // A catalog of 100,000 sessions of one checkpoint each.
    const catalog = await openStore(`${catalogUrl}?synchronous=off`);
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < 100_000; i++) {
      const at = new Date(now - 100_000 + i);
      pending.push(
        catalog.importSession({
          sessionId: `session-${String(i).padStart(6, '0')}`,
          head: 1,
          forkedFrom: null,
          createdAt: at,
          updatedAt: at,
          checkpoints: [
            { seq: 1, parent: null, data: { i }, metadata: { i }, transcript: [], createdAt: at },
          ],
        }),
      );
      if (pending.length === 64) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);
    await catalog.close();
  }, 300_000);

  it('draws the tree of a session of 10,000 checkpoints', async () => {
    const studio = await startStudio(sessionUrl);
    try {
      const { page, close } = await open(studio);
      const times: number[] = [];
      // The first visit, then one with the page's files and the store's pages warm.
      for (let visit = 0; visit < 2; visit++) {
        await page.goto(`${studio.origin}/sessions/big`);
        await nodeWith(page, 10_000, 'head');
        await page.locator('svg.tree [data-seq="10003"]').waitFor();
        times.push(await drawnAt(page, 'ckpt:tree-drawn'));
      }
      console.log(
        `studio: the tree of a session of 10,000 checkpoints drawn ${times.map((ms) => ms.toFixed(0)).join(' ms, then ')} ms after navigation`,
      );
      expect(await page.locator('svg.tree .gap').count()).toBeGreaterThan(0);
      await close();
    } finally {
      await studio.stop();
    }
  });

  it('draws the first page of a catalog of 100,000 sessions', async () => {
    const studio = await startStudio(catalogUrl);
    try {
      const { page, close } = await open(studio);
      const times: number[] = [];
      for (let visit = 0; visit < 2; visit++) {
        if (visit > 0) await page.goto(`${studio.origin}/`);
        await page.locator('tr[data-session="session-099999"]').waitFor();
        times.push(await drawnAt(page, 'ckpt:catalog-drawn'));
      }
      console.log(
        `studio: the first page of a catalog of 100,000 sessions drawn ${times.map((ms) => ms.toFixed(0)).join(' ms, then ')} ms after navigation`,
      );
      expect(await page.locator('table.sessions tbody tr').count()).toBe(50);
      await close();
    } finally {
      await studio.stop();
    }
  });
});
