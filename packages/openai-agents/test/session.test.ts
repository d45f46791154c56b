/**
 * Every method of the SDK's `Session` and `applyHistoryTransaction` on every backend, from
 * the SDK's documented interface: order and limits, popItem and replace_suffix keeping the
 * removed items in ckpt's history, idempotent transactions, concurrency, run states.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, isCkptError } from '@ckpt/core';
import { CkptSession } from '@ckpt/openai-agents';
import { emptyStore, SEALED_STORES, STORES } from '@ckpt/test-stores';
import type { AgentInputItem } from '@openai/agents-core';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-agents-session-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const user = (text: string): AgentInputItem => ({ role: 'user', content: text });
const texts = (items: AgentInputItem[]) => items.map((i) => (i as { content: string }).content);
const refused = (code: string) => (err: unknown) => isCkptError(err, code as never);

describe.each([...STORES, ...SEALED_STORES])('CkptSession on $name', (backend) => {
  let store: CheckpointStore;
  let session: CkptSession;
  let id: string;
  let made = 0;
  const opened: { close(): Promise<void> }[] = [];
  beforeEach(async () => {
    const handle = await backend.open(backend.server ? 'oa_session' : `s${made}`, dir);
    opened.push(handle);
    store = handle.store;
    if (backend.server) await emptyStore(store, ['openai-agents']);
    id = `conversation-${made++}`;
    session = new CkptSession(store, { sessionId: id });
  });
  afterAll(async () => {
    if (backend.server) await emptyStore(store, ['openai-agents']);
    for (const handle of opened) await handle.close();
  });

  it('keeps its id, or makes a random one', async () => {
    expect(await session.getSessionId()).toBe(id);
    const other = await new CkptSession(store).getSessionId();
    expect(other).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('returns the items in order, and the newest `limit` of them oldest first', async () => {
    await session.addItems([user('a'), user('b')]);
    await session.addItems([]);
    await session.addItems([user('c')]);
    expect(texts(await session.getItems())).toEqual(['a', 'b', 'c']);
    expect(texts(await session.getItems(2))).toEqual(['b', 'c']);
    expect(texts(await session.getItems(10))).toEqual(['a', 'b', 'c']);
    expect(await session.getItems(0)).toEqual([]);
    expect(await new CkptSession(store, { sessionId: 'nobody' }).getItems()).toEqual([]);
  });

  it('reads only the newest page for getItems(limit) of a long history', async () => {
    for (let i = 0; i < 120; i++) await session.addItems([user(`m${i}`)]);
    const reads = vi.spyOn(store, 'transcript');
    expect(texts(await session.getItems(3))).toEqual(['m117', 'm118', 'm119']);
    expect(reads).toHaveBeenCalledTimes(1);
    expect(reads.mock.calls[0]![1]?.limit).toBeLessThanOrEqual(4);
    reads.mockRestore();
  });

  it('pops the newest item and keeps it recoverable in ckpt history', async () => {
    await session.addItems([user('a'), user('b'), user('c')]);
    const before = await store.head(id);
    expect(await session.popItem()).toEqual(user('c'));
    expect(await session.popItem()).toEqual(user('b'));
    expect(texts(await session.getItems())).toEqual(['a']);
    // Nothing was deleted: rolling the session back restores the history before the pops.
    await store.rollback(id, before!);
    expect(texts(await session.getItems())).toEqual(['a', 'b', 'c']);
    await session.popItem();
    await session.popItem();
    expect(await session.popItem()).toEqual(user('a'));
    expect(await session.popItem()).toBeUndefined();
    await session.addItems([user('d')]);
    expect(texts(await session.getItems())).toEqual(['d']);
  });

  it('clears the session: every item, every earlier history and the run state', async () => {
    await session.addItems([user('a')]);
    await session.saveRunState('{"state":1}');
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(await store.info(id)).toBeNull();
    expect(await session.loadRunState()).toBeUndefined();
  });

  describe('retention', () => {
    /** 30 turns, a question and an answer each, two of them popped and asked again. */
    async function thirtyTurns(on: CkptSession): Promise<string[]> {
      for (let turn = 0; turn < 30; turn++) {
        await on.addItems([user(`question ${turn}`), user(`answer ${turn}`)]);
        if (turn % 15 === 7) {
          await on.popItem();
          await on.addItems([user(`answer ${turn}, again`)]);
        }
      }
      return texts(await on.getItems());
    }

    it('never removes an item of the conversation: prune, sweep and the retention option keep it whole', async () => {
      const items = await thirtyTurns(session);
      expect(items).toHaveLength(60);
      // A sweep walks the catalog, which a KV without list() does not have.
      if (store.capabilities.listSessions) {
        const swept = await store.sweep({ idleFor: 30 * 86_400_000, keepLast: 20 });
        expect(swept.sessions).toBe(0);
        expect(texts(await session.getItems())).toEqual(items);
      }
      await store.prune(id, { keepLast: 1 });
      await store.prune(id, { olderThan: 0 });
      expect(texts(await session.getItems())).toEqual(items);
      expect(texts(await session.getItems(5))).toEqual(items.slice(-5));
    });

    it('keeps the conversation whole on a store that prunes as it writes', async () => {
      const pruning = new CheckpointStore(store.backend, { retention: { keepLast: 2 } });
      const items = await thirtyTurns(new CkptSession(pruning, { sessionId: id }));
      expect(items).toHaveLength(60);
      expect(texts(await session.getItems())).toEqual(items);
    });

    it('removes only a timeline left by a rollback', async () => {
      await session.addItems([user('a'), user('b')]);
      const before = (await store.head(id))!;
      await session.addItems([user('left behind')]);
      await store.rollback(id, before);
      await session.addItems([user('c')]);
      expect(await store.prune(id, { keepLast: 1 })).toBe(1);
      expect(texts(await session.getItems())).toEqual(['a', 'b', 'c']);
    });

    it('keeps whole a conversation written before layout 2 once it goes on', async () => {
      // As an earlier build stored it: a checkpoint per change, with no needs and no layout.
      for (let i = 0; i < 5; i++) {
        await store.checkpoint(id, { op: 'add' }, { transcript: [user(`old ${i}`)] as never });
      }
      await session.addItems([user('new')]);
      await store.prune(id, { keepLast: 1 });
      expect(texts(await session.getItems())).toEqual(
        [0, 1, 2, 3, 4].map((i) => `old ${i}`).concat('new'),
      );
      expect((await store.load(id))?.metadata).toEqual({ layout: 2 });
    });
  });

  it('saves and loads a run state beside the history', async () => {
    expect(await session.loadRunState()).toBeUndefined();
    await session.saveRunState({ toString: () => '{"run":"state"}' });
    expect(await new CkptSession(store, { sessionId: id }).loadRunState()).toBe('{"run":"state"}');
    expect(await session.clearRunState()).toBe(true);
    expect(await session.loadRunState()).toBeUndefined();
  });

  describe('applyHistoryTransaction', () => {
    it('appends once per operationId, and refuses the id with another transaction', async () => {
      const append = { type: 'append_items' as const, items: [user('a'), user('b')] };
      await session.applyHistoryTransaction({ operationId: 'op-1', transaction: append });
      await session.applyHistoryTransaction({ operationId: 'op-1', transaction: append });
      expect(texts(await session.getItems())).toEqual(['a', 'b']);
      await expect(
        session.applyHistoryTransaction({
          operationId: 'op-1',
          transaction: { type: 'append_items', items: [user('x')] },
        }),
      ).rejects.toSatisfy(refused('CONFLICT'));
      expect(texts(await session.getItems())).toEqual(['a', 'b']);
    });

    it('replaces a matching suffix once, and changes nothing on a stale one', async () => {
      await session.addItems([user('a'), user('b'), user('c')]);
      const replace = {
        type: 'replace_suffix' as const,
        expectedSuffix: [user('b'), user('c')],
        replacement: [user('B')],
      };
      await session.applyHistoryTransaction({ operationId: 'op-r', transaction: replace });
      expect(texts(await session.getItems())).toEqual(['a', 'B']);
      // A retry of the same operation after it applied changes nothing.
      await session.applyHistoryTransaction({ operationId: 'op-r', transaction: replace });
      expect(texts(await session.getItems())).toEqual(['a', 'B']);
      const head = await store.head(id);
      await expect(
        session.applyHistoryTransaction({
          operationId: 'op-stale',
          transaction: { ...replace, expectedSuffix: [user('c')] },
        }),
      ).rejects.toSatisfy(refused('CONFLICT'));
      expect(texts(await session.getItems())).toEqual(['a', 'B']);
      expect(await store.head(id)).toBe(head);
      // The replaced items stay in ckpt history, one rollback away.
      await store.rollback(id, head! - 1);
      expect(texts(await session.getItems())).toEqual(['a', 'b', 'c']);
    });

    it('appends with an empty expected suffix, leaving no marker among the items', async () => {
      await session.applyHistoryTransaction({
        operationId: 'op-empty',
        transaction: { type: 'replace_suffix', expectedSuffix: [], replacement: [user('x')] },
      });
      expect(texts(await session.getItems())).toEqual(['x']);
      // A marker that drops nothing, as an earlier build wrote one, is no item either.
      await store.checkpoint(id, { op: 'replace' }, { transcript: [{ 'ckpt.drop': 0 }] });
      expect(texts(await session.getItems())).toEqual(['x']);
      expect(texts(await session.getItems(1))).toEqual(['x']);
    });

    it('refuses a malformed transaction before changing anything', async () => {
      for (const bad of [
        { operationId: '', transaction: { type: 'append_items', items: [] } },
        { operationId: 'x', transaction: { type: 'rewrite', items: [] } },
        { operationId: 'x', transaction: { type: 'replace_suffix', replacement: [] } },
      ]) {
        await expect(session.applyHistoryTransaction(bad as never)).rejects.toSatisfy(
          refused('INVALID_ARGUMENT'),
        );
      }
      expect(await store.info(id)).toBeNull();
    });
  });

  if (!backend.singleWriter)
    describe('concurrency', () => {
      it('loses nothing when two runners append to one session at once', async () => {
        const other = new CkptSession(store, { sessionId: id });
        await Promise.all(
          Array.from({ length: 40 }, (_, i) => (i % 2 ? session : other).addItems([user(`m${i}`)])),
        );
        const got = texts(await session.getItems());
        expect([...got].sort()).toEqual(Array.from({ length: 40 }, (_, i) => `m${i}`).sort());
      });

      it('pops each item once when runners pop at once', async () => {
        await session.addItems(Array.from({ length: 10 }, (_, i) => user(`m${i}`)));
        const other = new CkptSession(store, { sessionId: id });
        const popped = await Promise.all(
          Array.from({ length: 12 }, (_, i) => (i % 2 ? session : other).popItem()),
        );
        const items = popped
          .filter((p) => p !== undefined)
          .map((p) => (p as { content: string }).content);
        expect(items.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`).sort());
        expect(await session.getItems()).toEqual([]);
      });

      it('applies a retried operation once when the retries race', async () => {
        const append = { type: 'append_items' as const, items: [user('once')] };
        await Promise.all(
          Array.from({ length: 6 }, () =>
            new CkptSession(store, { sessionId: id }).applyHistoryTransaction({
              operationId: 'op-race',
              transaction: append,
            }),
          ),
        );
        expect(texts(await session.getItems())).toEqual(['once']);
      });
    });

  it('refuses something that is not a store', () => {
    expect(() => new CkptSession({} as never)).toThrow(/CheckpointStore or a store URL/);
  });
});
