/**
 * Chats under core's own tools on every backend. Whatever prunes (`prune`, `sweep`, the
 * store's `retention` option): the active branch and the chat list read as before; a branch
 * left behind goes whole or stays whole; a chat stored before layout 2 is kept whole once it
 * goes on. A chat that `fork` made (which carries no idempotency keys) goes on as its source.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CkptChatStore } from '@ckpt/ai-sdk';
import { CheckpointStore, type ExportedCheckpoint } from '@ckpt/core';
import { STORES, storesOn } from '@ckpt/test-stores';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { send, tools, user } from './support/route.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-ai-sdk-core-tools-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCOPES = ['ai-sdk.approvals', 'ai-sdk.streams'];
const DAY = 86_400_000;
let made = 0;

describe.each(STORES)('chats under core tools on $name', (backend) => {
  const stores = storesOn(backend, 'ai_sdk_core_tools', dir, SCOPES);
  afterAll(stores.closeAll);
  afterEach(stores.closeOpened);
  let store: CheckpointStore;
  let chats: CkptChatStore;
  let id: string;
  beforeEach(async () => {
    store = await stores.open();
    chats = new CkptChatStore(store, { tools });
    id = `chat-${made++}`;
  });

  /** The chat as a user reads it: its messages, and its entry in the chat list. */
  const reads = async (on: CkptChatStore = chats) => ({
    messages: await on.load(id),
    listed: store.capabilities.listSessions
      ? (await on.list({ limit: 1000 })).items.find((chat) => chat.chatId === id)
      : undefined,
  });

  /** 30 turns: 60 messages. */
  const thirtyTurns = async (on: CkptChatStore) => {
    for (let turn = 0; turn < 30; turn++) {
      await send(on, id, { message: user(`q${turn}`, `question ${turn}`) });
    }
  };

  it('keeps every message of the active branch through prune and sweep', async () => {
    await thirtyTurns(chats);
    const before = await reads();
    expect(before.messages).toHaveLength(60);
    if (store.capabilities.listSessions) {
      await store.sweep({ idleFor: 30 * DAY, keepLast: 20 });
      expect(await reads()).toEqual(before);
    }
    await store.prune(id, { keepLast: 1 });
    await store.prune(id, { olderThan: 0 });
    expect(await reads()).toEqual(before);
    expect(before.listed?.messageCount ?? 60).toBe(60);
  });

  it('keeps every message on a store that prunes as it writes', async () => {
    const pruning = new CkptChatStore(
      new CheckpointStore(store.backend, { retention: { keepLast: 20 } }),
      { tools },
    );
    await thirtyTurns(pruning);
    const after = await reads();
    expect(after.messages).toHaveLength(60);
    expect(after.messages[0]?.id).toBe('q0');
    expect(after.listed?.messageCount ?? 60).toBe(60);
  });

  it('removes a branch left behind whole, and never the active one', async () => {
    await send(chats, id, { message: user('u1', 'hello') });
    await send(chats, id, { message: user('u2', 'how are you?') });
    // An edit: the first branch is left behind, then one more turn on the new one.
    await send(chats, id, { message: user('u2', 'and you?'), messageId: 'u2' });
    await send(chats, id, { message: user('u3', 'fine') });
    const before = await reads();
    const edited = before.messages[2]!.id;
    expect(await chats.siblings(id, 'u2')).toEqual(['u2', edited]);
    await store.prune(id, { keepLast: 1 });
    expect(await reads()).toEqual(before);
    // The branch left behind went whole: no part of it is left to switch to.
    expect(await chats.siblings(id, edited)).toEqual([edited]);
    await send(chats, id, { message: user('u4', 'bye') });
    expect((await chats.load(id)).map((m) => m.id).slice(0, 6)).toEqual(
      before.messages.map((m) => m.id),
    );
  });

  it('keeps whole a chat stored before layout 2 once it goes on', async () => {
    await thirtyTurns(chats);
    const before = await reads();
    // The same chat as an earlier build stored it: no needs, no layout in the metadata.
    const exported = (await store.exportSession(id))!;
    const checkpoints: ExportedCheckpoint[] = [];
    for await (const cp of exported.checkpoints) {
      const { layout: _, ...metadata } = cp.metadata;
      const { needs: __, ...old } = cp;
      checkpoints.push({ ...old, metadata });
    }
    await store.importSession({ ...exported, checkpoints }, { ifExists: 'replace' });
    await send(chats, id, { message: user('late', 'one more') });
    await store.prune(id, { keepLast: 1 });
    const after = await reads();
    expect(after.messages.slice(0, 60)).toEqual(before.messages);
    expect(after.messages).toHaveLength(62);
  });

  it('edits the first message of a chat that fork made', async () => {
    await send(chats, id, { message: user('u1', 'hello') });
    const fork = await store.fork(id);
    await send(chats, fork, { message: user('u1', 'bonjour'), messageId: 'u1' });
    expect((await chats.load(fork))[0]!.parts).toEqual([{ type: 'text', text: 'bonjour' }]);
    expect((await chats.tree(fork)).messages.filter((m) => m.parentId === null)).toHaveLength(2);
  });
});
