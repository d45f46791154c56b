/**
 * Tags on every backend, driven as an application drives the chat store: chats made through
 * the AI SDK's chat route (`streamText` on the mock model, `toUIMessageStream` whose `onEnd`
 * saves), read back through the chat store (`load`, `list`). A user's chat carries the tag
 * `user`, and the user's list reads the tag index; chats saved before tags (by the prefix of
 * their ids alone) are still listed; a store without tags lists by prefix as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CkptChatStore } from '@ckpt/ai-sdk';
import { CheckpointStore, isCkptError, MAX_TAGS, type SessionsOptions } from '@ckpt/core';
import { memory } from '@ckpt/memory';
import { STORES, storesOn, withoutTags } from '@ckpt/test-stores';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { send, textOf, tools, user } from './support/route.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-ai-sdk-tags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCOPES = ['ai-sdk.approvals', 'ai-sdk.streams', 'ai-sdk.tagged'];
const refused = (code: string, argument?: string) => (err: unknown) =>
  isCkptError(err, code as never) && (argument === undefined || err.details.argument === argument);
let made = 0;

/** Every chat of `chats.list()`, a page of `limit` at a time. */
async function listAll(chats: CkptChatStore, limit: number, where?: Record<string, string>) {
  const all: Awaited<ReturnType<CkptChatStore['list']>>['items'] = [];
  let cursor: string | null = null;
  do {
    const page = await chats.list({ limit, cursor, ...(where ? { where } : {}) });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    all.push(...page.items);
    cursor = page.cursor;
  } while (cursor !== null);
  return all;
}

/** Newest first, as the chat list gives them: by updatedAt, then by id, descending. */
function expectNewestFirst(chats: { chatId: string; updatedAt: Date }[]) {
  for (let i = 1; i < chats.length; i++) {
    const [a, b] = [chats[i - 1]!, chats[i]!];
    const newer =
      a.updatedAt.getTime() > b.updatedAt.getTime() ||
      (a.updatedAt.getTime() === b.updatedAt.getTime() && a.chatId > b.chatId);
    expect(newer, `${a.chatId} before ${b.chatId}`).toBe(true);
  }
}

/** The listings `store.sessions` was asked for while `run` ran. */
async function listingsDuring(store: CheckpointStore, run: () => Promise<unknown>) {
  const spy = vi.spyOn(store, 'sessions');
  try {
    await run();
    return spy.mock.calls.map(([options]) => options as SessionsOptions);
  } finally {
    spy.mockRestore();
  }
}

describe.each(STORES)('tags of CkptChatStore on $name', (backend) => {
  const stores = storesOn(backend, 'ai_sdk_tags', dir, SCOPES);
  afterAll(stores.closeAll);
  afterEach(stores.closeOpened);
  let store: CheckpointStore;
  let chats: CkptChatStore;
  /** A user of this test alone. */
  let ann: string;
  beforeEach(async () => {
    store = await stores.open();
    chats = new CkptChatStore(store, { tools });
    ann = `ann-${made++}`;
  });
  const withTags = (ctx: { skip(): void }) => {
    // A KV without `list` lists nothing; a backend without tags is tested below, on memory().
    if (!store.capabilities.listSessions || !store.capabilities.tags) ctx.skip();
  };

  it("tags each new chat of a user as it is made, and lists the user's chats through the tag index, a page at a time", async (ctx) => {
    withTags(ctx);
    const mine = chats.forUser(ann);
    const other = chats.forUser(`bob-${made}`);
    const ids = Array.from({ length: 13 }, (_, i) => `chat-${i}`);
    await Promise.all([
      ...ids.map((id) => send(mine, id, { message: user(`${id}-q`, `question of ${id}`) })),
      ...['x', 'y'].map((id) => send(other, id, { message: user('q', 'not ann') })),
    ]);
    for (const id of ids) {
      expect((await store.info(`${ann}/${id}`))!.tags).toEqual({ user: ann });
      expect((await mine.load(id)).map(textOf)[0]).toBe(`question of ${id}`);
    }
    const calls = await listingsDuring(store, async () => {
      const listed = await listAll(mine, 4);
      expect(listed.map((c) => c.chatId).sort()).toEqual([...ids].sort());
      expectNewestFirst(listed);
      for (const chat of listed) {
        expect(chat).toMatchObject({ messageCount: 2, tags: { user: ann } });
        expect(chat.title).toBe(`question of ${chat.chatId}`);
      }
    });
    // Through the index: every page asks for the user's tag (the first listing also walks the
    // user's ids once, for chats saved before tags; there are none).
    const pages = calls.filter((c) => c.where !== undefined);
    expect(pages).toHaveLength(4);
    for (const page of pages) expect(page).toMatchObject({ where: { user: ann }, limit: 4 });
    expect(calls.length - pages.length).toBeLessThanOrEqual(1);
    // Once that walk is recorded, a listing reads the index alone.
    const again = await listingsDuring(store, () => mine.list({ limit: 4 }));
    expect(again).toEqual([expect.objectContaining({ where: { user: ann } })]);
  });

  it('lists the chats saved before tags beside the new ones, in order, each once, and tags them', async (ctx) => {
    withTags(ctx);
    // Chats saved as an earlier version saved them: the session `${userId}/${chatId}`, no tag.
    for (const id of ['old-1', 'old-2', 'old-3']) {
      await send(chats, `${ann}/${id}`, { message: user(`${id}-q`, `earlier ${id}`) });
      expect((await store.info(`${ann}/${id}`))!.tags).toEqual({});
    }
    const mine = chats.forUser(ann);
    await send(mine, 'new-1', { message: user('n1', 'a new one') });
    await send(mine, 'new-2', { message: user('n2', 'another') });
    const before = new Map(
      (await store.sessions({ prefix: `${ann}/` })).items.map((s) => [s.sessionId, s.updatedAt]),
    );

    const listed = await listAll(mine, 2);
    expect(listed.map((c) => c.chatId)).toEqual(['new-2', 'new-1', 'old-3', 'old-2', 'old-1']);
    expect((await mine.load('old-2')).map(textOf)[0]).toBe('earlier old-2');
    // Tagged without moving: their times, hence their places in the list, are the same.
    for (const chat of listed) {
      expect(chat.tags).toEqual({ user: ann });
      expect(chat.updatedAt).toEqual(before.get(`${ann}/${chat.chatId}`));
    }
    expect(await store.state('ai-sdk.tagged').get(ann)).toBe(true);
    // Another chat store (another process) on the same store reads the index alone.
    const elsewhere = new CkptChatStore(store).forUser(ann);
    const calls = await listingsDuring(store, () => elsewhere.list({ limit: 10 }));
    expect(calls).toEqual([expect.objectContaining({ where: { user: ann } })]);
  });

  it('tags a chat saved before tags at its next save or title, and keeps its tags after', async (ctx) => {
    withTags(ctx);
    await send(chats, `${ann}/old`, { message: user('q1', 'earlier') });
    await send(chats, `${ann}/titled`, { message: user('q1', 'earlier') });
    const mine = chats.forUser(ann);
    await send(mine, 'old', { message: user('q2', 'later') });
    expect((await store.info(`${ann}/old`))!.tags).toEqual({ user: ann });
    await mine.setTitle('titled', 'A title');
    expect((await store.info(`${ann}/titled`))!.tags).toEqual({ user: ann });
    // A save leaves the tags it finds.
    await mine.setTags('old', { status: 'open' });
    await send(mine, 'old', { message: user('q3', 'again') });
    expect((await store.info(`${ann}/old`))!.tags).toEqual({ status: 'open', user: ann });
    expect((await mine.load('old')).map(textOf)).toEqual([
      'earlier',
      expect.any(String),
      'later',
      expect.any(String),
      'again',
      expect.any(String),
    ]);
  });

  it('lists every chat when new chats are made while the first listing tags the earlier ones', async (ctx) => {
    withTags(ctx);
    const earlier = Array.from({ length: 8 }, (_, i) => `old-${i}`);
    await Promise.all(
      earlier.map((id) => send(chats, `${ann}/${id}`, { message: user('q', `earlier ${id}`) })),
    );
    const mine = chats.forUser(ann);
    const fresh = Array.from({ length: 8 }, (_, i) => `new-${i}`);
    await Promise.all([
      mine.list({ limit: 3 }),
      mine.forUser(ann).list({ limit: 3 }),
      ...fresh.map((id) => send(mine, id, { message: user('q', `new ${id}`) })),
    ]);
    const listed = await listAll(mine, 3);
    expect(listed.map((c) => c.chatId).sort()).toEqual([...earlier, ...fresh].sort());
    expectNewestFirst(listed);
  });

  it('goes on from a cursor of the listing by prefix that an earlier version gave', async (ctx) => {
    withTags(ctx);
    for (const id of ['a', 'b', 'c']) {
      await send(chats, `${ann}/${id}`, { message: user('q', `earlier ${id}`) });
    }
    // The first page as an earlier version's list() read it: by prefix alone.
    const first = await store.sessions({ prefix: `${ann}/`, limit: 1 });
    const rest = await chats.forUser(ann).list({ limit: 5, cursor: first.cursor });
    expect(rest.items.map((c) => c.chatId)).toEqual(['b', 'a']);
    expect(rest.cursor).toBeNull();
    await expect(chats.forUser(ann).list({ cursor: 'not a cursor' })).rejects.toSatisfy(
      refused('INVALID_ARGUMENT', 'cursor'),
    );
  });

  it("gives a chat the application's tags, and finds a user's chats by them", async (ctx) => {
    withTags(ctx);
    const mine = chats.forUser(ann);
    const bob = chats.forUser(`bob-${made}`);
    for (const id of ['trip', 'soup', 'tax']) await send(mine, id, { message: user('q', id) });
    await send(bob, 'trip', { message: user('q', 'bob') });
    const { updatedAt } = (await store.info(`${ann}/trip`))!;
    await mine.setTags('trip', { status: 'open', topic: 'travel' });
    await mine.setTags('tax', { status: 'open' });
    await bob.setTags('trip', { status: 'open' });
    // Another session tagged with the user (an agent's run, say) is not one of her chats.
    await store.checkpoint(`run-of-${ann}`, {}, { tags: { user: ann, status: 'open' } });

    const open = await listAll(mine, 1, { status: 'open' });
    expect(open.map((c) => c.chatId)).toEqual(['tax', 'trip']);
    expect(open[1]).toMatchObject({
      tags: { status: 'open', topic: 'travel', user: ann },
      updatedAt,
      messageCount: 2,
    });
    expect((await mine.list({ where: { status: 'open', topic: 'travel' } })).items).toHaveLength(1);
    expect((await listAll(mine, 10)).map((c) => c.chatId)).toEqual(['tax', 'soup', 'trip']);
    // `{}` takes the application's tags away; the user's stays.
    await mine.setTags('tax', {});
    expect((await store.info(`${ann}/tax`))!.tags).toEqual({ user: ann });
    // Without a user: every session with the tags.
    const everyone = (await listAll(chats, 100, { status: 'open' })).map((c) => c.chatId);
    expect(everyone).toEqual(
      expect.arrayContaining([`${ann}/trip`, `bob-${made}/trip`, `run-of-${ann}`]),
    );
    expect(everyone).not.toContain(`${ann}/tax`);
  });

  it('refuses tags of another user, too many tags and a chat that does not exist, writing nothing', async (ctx) => {
    withTags(ctx);
    const mine = chats.forUser(ann);
    await send(mine, 'trip', { message: user('q', 'trip') });
    await expect(mine.setTags('trip', { user: 'bob' })).rejects.toSatisfy(
      refused('INVALID_ARGUMENT', 'tags.user'),
    );
    await expect(mine.list({ where: { user: 'bob' } })).rejects.toSatisfy(
      refused('INVALID_ARGUMENT', 'where.user'),
    );
    const many = Object.fromEntries(Array.from({ length: MAX_TAGS }, (_, i) => [`k${i}`, 'v']));
    await expect(mine.setTags('trip', many)).rejects.toSatisfy(refused('INVALID_ARGUMENT', 'tags'));
    await expect(mine.setTags('trip', { 'bad key': 'v' })).rejects.toSatisfy(
      refused('INVALID_ARGUMENT'),
    );
    for (const tags of [null, new Map([['status', 'open']]), ['status']]) {
      await expect(mine.setTags('trip', tags as never)).rejects.toSatisfy(
        refused('INVALID_ARGUMENT', 'tags'),
      );
    }
    expect((await store.info(`${ann}/trip`))!.tags).toEqual({ user: ann });
    await expect(mine.setTags('nothing', { status: 'open' })).rejects.toSatisfy(
      refused('NOT_FOUND', 'chatId'),
    );
    expect(await store.info(`${ann}/nothing`)).toBeNull();
    // The user's own tag may be named, with the same value, beside 15 of the application's.
    const { k0: _, ...fifteen } = many;
    await mine.setTags('trip', { ...fifteen, user: ann });
    expect(Object.keys((await store.info(`${ann}/trip`))!.tags)).toHaveLength(MAX_TAGS);
  });

  it('lists the chats of a user whose id is too long for a tag value by prefix, untagged', async (ctx) => {
    withTags(ctx);
    const long = `${'é'.repeat(130)}-${made}`;
    const mine = chats.forUser(long);
    await send(mine, 'a', { message: user('q', 'a') });
    await send(mine, 'b', { message: user('q', 'b') });
    expect((await store.info(`${long}/a`))!.tags).toEqual({});
    const calls = await listingsDuring(store, async () => {
      expect((await listAll(mine, 1)).map((c) => c.chatId)).toEqual(['b', 'a']);
    });
    for (const call of calls) expect(call).toMatchObject({ prefix: `${long}/` });
    expect(calls.every((call) => call.where === undefined)).toBe(true);
  });
});

describe('a store that gains tags', () => {
  it('lists by prefix without tags (refusing tags there), then tags the earlier chats once at the first listing with them', async () => {
    const backend = memory();
    const before = new CkptChatStore(new CheckpointStore(withoutTags(backend)));
    expect((await before.store).capabilities.tags).toBe(false);
    const ann = before.forUser('ann');
    for (const id of ['a', 'b', 'c']) await send(ann, id, { message: user('q', id) });
    expect((await listAll(ann, 2)).map((c) => c.chatId)).toEqual(['c', 'b', 'a']);
    expect((await ann.list()).items[0]!.tags).toEqual({});
    expect(await (await before.store).state('ai-sdk.tagged').get('ann')).toBeUndefined();
    await expect(ann.setTags('a', { status: 'open' })).rejects.toSatisfy(refused('UNSUPPORTED'));
    await expect(ann.list({ where: { status: 'open' } })).rejects.toSatisfy(refused('UNSUPPORTED'));

    const store = new CheckpointStore(backend);
    const after = new CkptChatStore(store).forUser('ann');
    await send(after, 'd', { message: user('q', 'd') });
    expect((await listAll(after, 2)).map((c) => c.chatId)).toEqual(['d', 'c', 'b', 'a']);
    expect((await store.sessions({ where: { user: 'ann' } })).items).toHaveLength(4);
    const calls = await listingsDuring(store, () => after.list());
    expect(calls).toEqual([expect.objectContaining({ where: { user: 'ann' } })]);
  });
});
