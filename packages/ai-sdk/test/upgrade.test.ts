/**
 * Stores that earlier builds wrote, read by today's: each fixture in test/fixtures is a SQLite
 * file an earlier build's chat store wrote (with write-fixture.mjs), with what the chat store
 * read from it then. Opened in place (which upgrades the file) and copied from there to every
 * backend, each chat reads exactly as it did (its active branch, its tree, the siblings of its
 * messages, the chat list), goes on through the AI SDK's chat route, and reads whole through
 * the store's sweep and prune. Layout 1 is the chat store before its checkpoints named their
 * needs: a chat of layout 1 is kept whole from its next save on.
 */
import { fileURLToPath } from 'node:url';
import { CkptChatStore } from '@ckpt/ai-sdk';
import type { CheckpointStore } from '@ckpt/core';
import { fixtureNames, fixtureReads, fixtureTargets } from '@ckpt/test-stores/upgrade';
import { afterAll, describe, expect, it } from 'vitest';
import { CHATS, type ChatReads, type ListedChat, readChat, readList } from './fixtures/chats.mjs';
import { send, textOf, user } from './support/route.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const SCOPES = ['ai-sdk.approvals', 'ai-sdk.streams'];

/** A chat as a user reads it: its active branch, and its entry in the chat list. */
async function whole(store: CheckpointStore, chats: CkptChatStore, chatId: string) {
  return {
    messages: await chats.load(chatId),
    listed: store.capabilities.listSessions
      ? (await readList(chats)).find((chat) => chat.chatId === chatId)
      : undefined,
  };
}

describe.each(fixtureNames(fixtures))('a store written in %s', (name) => {
  const expected = fixtureReads<{ list: ListedChat[]; chats: Record<string, ChatReads> }>(
    fixtures,
    name,
  );
  const { targets, closeAll } = fixtureTargets(fixtures, name, {
    namespace: 'ai_sdk_upgrade',
    scopes: SCOPES,
  });
  afterAll(closeAll);

  describe.each(targets)('$name', (target) => {
    it('reads every chat as it did', async () => {
      const store = await target.open();
      const chats = new CkptChatStore(store);
      for (const chatId of CHATS) {
        expect(await readChat(chats, chatId), chatId).toEqual(expected.chats[chatId]);
      }
      // A chat saved before tags existed lists with none.
      const listed = expected.list.map((chat) => ({ ...chat, tags: {} }));
      if (store.capabilities.listSessions) expect(await readList(chats)).toEqual(listed);
    });

    it('goes on, and keeps every chat whole through sweep and prune', async () => {
      const store = await target.open();
      const chats = new CkptChatStore(store);
      const before = new Map<string, Awaited<ReturnType<typeof whole>>>();
      for (const chatId of CHATS) {
        await send(chats, chatId, { message: user(`${chatId}-late`, 'One more thing.') });
        const now = await whole(store, chats, chatId);
        expect(now.messages.slice(0, -2), chatId).toEqual(expected.chats[chatId]!.messages);
        expect(now.messages.slice(-2).map(textOf)).toEqual([
          'One more thing.',
          'You said: One more thing.',
        ]);
        const was = expected.list.find((chat) => chat.chatId === chatId)!;
        if (now.listed) expect(now.listed.messageCount).toBe(was.messageCount + 2);
        before.set(chatId, now);
      }

      // Whatever prunes keeps each chat's active branch and its list entry.
      if (store.capabilities.listSessions) {
        await store.sweep({ keepLast: 1 });
        for (const chatId of CHATS) {
          expect(await whole(store, chats, chatId), chatId).toEqual(before.get(chatId));
        }
      }
      for (const chatId of CHATS) await store.prune(chatId, { keepLast: 1 });
      for (const chatId of CHATS) {
        expect(await whole(store, chats, chatId), chatId).toEqual(before.get(chatId));
      }
    });
  });
});
