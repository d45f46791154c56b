/**
 * Stores that earlier builds wrote, read by today's: each fixture in test/fixtures is a SQLite
 * file an earlier build's saver wrote (with write-fixture.mjs), with what LangGraph read from
 * it then. Opened in place (which upgrades the file) and copied from there to every backend,
 * each thread reads exactly as it did, goes on, and keeps through the saver's prune and the
 * store's what its checkpoints read. Layout 1 is the saver before it named its needs: its
 * prune set the values of removed checkpoints aside in a state key, and its checkpoints need
 * what is unknown.
 */
import { fileURLToPath } from 'node:url';
import { CkptSaver } from '@ckpt/langgraph';
import { fixtureNames, fixtureReads, fixtureTargets } from '@ckpt/test-stores/upgrade';
import { afterAll, describe, expect, it } from 'vitest';
import { fixtureGraphs, reads, type ThreadReads } from './fixtures/graphs.mjs';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const sessionOf = (threadId: string) => JSON.stringify([threadId, '']);

/** The values of a thread's state as the fixtures record them. */
const valuesOf = (read: ThreadReads) => read.values as { messages: unknown[]; log: string[] };

/** Each checkpoint `now` lists that `then` listed reads as it read then. */
function sameHistory(now: ThreadReads, then: ThreadReads, what: string): void {
  const before = new Map(then.history.map((h) => [h.id, h.read]));
  for (const { id, read } of now.history) {
    if (before.has(id)) expect(read, `${what}: checkpoint ${id}`).toBe(before.get(id));
  }
}

describe.each(fixtureNames(fixtures))('a store written in %s', (name) => {
  const expected = fixtureReads<Record<string, ThreadReads>>(fixtures, name);
  const { targets, closeAll } = fixtureTargets(fixtures, name, {
    namespace: 'lg_upgrade',
    scopes: ['langgraph'],
  });
  afterAll(closeAll);

  describe.each(targets)('$name', (target) => {
    it('reads every thread as it did, and its saver prunes nothing a thread reads from it', async () => {
      const store = await target.open();
      const saver = new CkptSaver(store);
      const { chat, steps } = fixtureGraphs(saver);
      for (const [thread, graph] of [
        ['chat-pruned', chat],
        ['chat-whole', chat],
        ['steps-pruned', steps],
      ] as const) {
        expect(await reads(graph, thread), thread).toEqual(expected[thread]);
      }
      // A layout 1 checkpoint names no needs: what it reads is unknown, so every one stays. From
      // layout 2 the prune removes what no kept checkpoint reads.
      const removed = await saver.prune('chat-whole', { keepLast: 1 });
      const pruned = await reads(chat, 'chat-whole');
      if (name === 'layout-1') {
        expect(removed).toBe(0);
        expect(pruned).toEqual(expected['chat-whole']);
      } else {
        expect(removed).toBeGreaterThan(0);
        expect(pruned.values).toEqual(expected['chat-whole']!.values);
        sameHistory(pruned, expected['chat-whole']!, 'chat-whole');
      }
    });

    it('goes on writing, and keeps what every thread reads through every prune', async () => {
      const store = await target.open();
      const saver = new CkptSaver(store);
      const { chat, steps, turn, step } = fixtureGraphs(saver);
      await step('steps-pruned', {});
      const stepped = await reads(steps, 'steps-pruned');
      expect(stepped.values).toEqual({
        user: 'ann',
        count: 4,
        log: ['step 1 for ann', 'step 2 for ann', 'step 3 for ann', 'step 4 for ann'],
      });
      await turn('chat-whole', 4);
      await turn('chat-pruned', 8);
      const chats = {
        'chat-whole': await reads(chat, 'chat-whole'),
        'chat-pruned': await reads(chat, 'chat-pruned'),
      };
      expect(valuesOf(chats['chat-whole']).messages).toHaveLength(10);
      expect(valuesOf(chats['chat-pruned']).messages).toHaveLength(18);
      for (const [thread, read] of Object.entries(chats)) {
        expect(valuesOf(read).messages.slice(0, -2)).toEqual(valuesOf(expected[thread]!).messages);
        expect(read.values.profile).toBe('likes tea');
      }

      // The store's prune, then the saver's: every thread reads as it did before them.
      for (const thread of ['chat-whole', 'chat-pruned', 'steps-pruned']) {
        await store.prune(sessionOf(thread), { keepLast: 1 });
        await saver.prune(thread, { keepLast: 1 });
      }
      expect(await reads(steps, 'steps-pruned')).toMatchObject({ values: stepped.values });
      for (const [thread, read] of Object.entries(chats)) {
        const now = await reads(chat, thread);
        expect(now.values, thread).toEqual(read.values);
        sameHistory(now, read, thread);
        sameHistory(now, expected[thread]!, thread);
      }
    });
  });
});
