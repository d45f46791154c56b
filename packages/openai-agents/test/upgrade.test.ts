/**
 * Stores that earlier builds wrote, read by today's: each fixture in test/fixtures is a SQLite
 * file an earlier build's session wrote (with write-fixture.mjs), with what the SDK read from
 * it then. Opened in place (which upgrades the file) and copied from there to every backend,
 * each conversation reads exactly as it did (its items, its newest items, its saved run state),
 * goes on (new items, new transactions, the saved run approved and finished), and reads whole
 * through the store's sweep and prune. Layout 1 is the session before its checkpoints named
 * their needs: a conversation of layout 1 is kept whole from its next change on.
 */
import { fileURLToPath } from 'node:url';
import { CkptSession } from '@ckpt/openai-agents';
import { fixtureNames, fixtureReads, fixtureTargets } from '@ckpt/test-stores/upgrade';
import type { AgentInputItem } from '@openai/agents-core';
import { afterAll, describe, expect, it } from 'vitest';
import {
  assistant,
  CONVERSATIONS,
  type ConversationReads,
  finishRefund,
  reads,
  user,
} from './fixtures/conversations.mjs';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

/** What each conversation goes on with, through the SDK's session; the items it adds. */
const GOING_ON: Record<string, (session: CkptSession) => Promise<unknown>> = {
  chat: (session) => session.addItems([user('And 5 + 5?'), assistant('10.')]),
  transactions: (session) =>
    session.applyHistoryTransaction({
      operationId: 'turn-4',
      transaction: { type: 'append_items', items: [assistant('The board did.')] },
    }),
  refund: async (session) => expect(await finishRefund(session)).toBe('Your refund is on its way.'),
};

/** Each item as its type (or role). */
const kinds = (items: AgentInputItem[]) =>
  items.map((item) => (item as { type?: string }).type ?? (item as { role: string }).role);

describe.each(fixtureNames(fixtures))('a store written in %s', (name) => {
  const expected = fixtureReads<Record<string, ConversationReads>>(fixtures, name);
  const { targets, closeAll } = fixtureTargets(fixtures, name, {
    namespace: 'agents_upgrade',
    scopes: ['openai-agents'],
  });
  afterAll(closeAll);

  describe.each(targets)('$name', (target) => {
    it('reads every conversation as it did', async () => {
      const store = await target.open();
      for (const sessionId of CONVERSATIONS) {
        expect(await reads(new CkptSession(store, { sessionId })), sessionId).toEqual(
          expected[sessionId],
        );
      }
    });

    it('goes on, and keeps every conversation whole through sweep and prune', async () => {
      const store = await target.open();
      const before = new Map<string, AgentInputItem[]>();
      for (const sessionId of CONVERSATIONS) {
        const session = new CkptSession(store, { sessionId });
        await GOING_ON[sessionId]!(session);
        const items = await session.getItems();
        expect(items.slice(0, expected[sessionId]!.items.length), sessionId).toEqual(
          expected[sessionId]!.items,
        );
        before.set(sessionId, items);
      }
      expect(kinds(before.get('refund')!)).toEqual([
        'message',
        'function_call',
        'function_call_result',
        'message',
      ]);
      expect(before.get('chat')!.length).toBe(expected.chat!.items.length + 2);
      expect(before.get('transactions')!.length).toBe(expected.transactions!.items.length + 1);

      // Whatever prunes keeps every item of each conversation.
      const readAll = async (sessionId: string) => new CkptSession(store, { sessionId }).getItems();
      if (store.capabilities.listSessions) {
        await store.sweep({ keepLast: 1 });
        for (const sessionId of CONVERSATIONS) {
          expect(await readAll(sessionId), sessionId).toEqual(before.get(sessionId));
        }
      }
      for (const sessionId of CONVERSATIONS) await store.prune(sessionId, { keepLast: 1 });
      for (const sessionId of CONVERSATIONS) {
        expect(await readAll(sessionId), sessionId).toEqual(before.get(sessionId));
      }
    });
  });
});
