/**
 * What the saver promises beyond LangGraph's suite, on every backend: pending writes keyed by
 * (task, idx), ordered and safe under parallel tasks; late writes after deleteThread; channel
 * values stored once per version; pruning that keeps kept checkpoints whole; errors.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CheckpointStore,
  type CkptError,
  isCkptError,
  MAX_NEEDS,
  openStore,
} from '@ckpt/core';
import { CkptSaver } from '@ckpt/langgraph';
import { emptyStore, SEALED_STORES, STORES } from '@ckpt/test-stores';
import { HumanMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { type Checkpoint, ERROR, emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-langgraph-saver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const meta = { source: 'loop' as const, step: 0, parents: {} };

/** A checkpoint with `values`, each channel at the version given. */
function checkpointOf(values: Record<string, [number, unknown]>): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id: uuid6(-3),
    channel_values: Object.fromEntries(Object.entries(values).map(([k, [, v]]) => [k, v])),
    channel_versions: Object.fromEntries(Object.entries(values).map(([k, [n]]) => [k, n])),
  };
}

describe.each([...STORES, ...SEALED_STORES])('CkptSaver on $name', (backend) => {
  let store: CheckpointStore;
  let saver: CkptSaver;
  let thread: string;
  const opened: { close(): Promise<void> }[] = [];
  let made = 0;
  beforeEach(async () => {
    const handle = await backend.open(backend.server ? 'lg_saver' : `s${made++}`, dir);
    opened.push(handle);
    store = handle.store;
    if (backend.server) await emptyStore(store, ['langgraph']);
    saver = new CkptSaver(store);
    thread = `thread-${made++}`;
  });
  afterAll(async () => {
    if (backend.server) await emptyStore(store, ['langgraph']);
    for (const handle of opened) await handle.close();
  });
  const root = (): RunnableConfig => ({ configurable: { thread_id: thread, checkpoint_ns: '' } });

  describe('pending writes', () => {
    it('keeps the first write of each (task, idx), replaces special writes, and orders them', async () => {
      const at = await saver.put(root(), checkpointOf({}), meta, {});
      await saver.putWrites(
        at,
        [
          ['x', 'first'],
          ['y', 1],
        ],
        'task-b',
        'path-1',
      );
      await saver.putWrites(
        at,
        [
          ['x', 'retried'],
          ['y', 2],
        ],
        'task-b',
        'path-1',
      );
      await saver.putWrites(at, [[ERROR, 'boom']], 'task-a', 'path-2');
      await saver.putWrites(at, [[ERROR, 'boom again']], 'task-a', 'path-2');
      await saver.putWrites(at, [['z', 'no path']], 'task-c');
      expect((await saver.getTuple(at))?.pendingWrites).toEqual([
        ['task-c', 'z', 'no path'],
        ['task-b', 'x', 'first'],
        ['task-b', 'y', 1],
        ['task-a', ERROR, 'boom again'],
      ]);
    });

    if (!backend.singleWriter)
      it('keeps every write of 24 tasks writing to one checkpoint at once', async () => {
        const at = await saver.put(root(), checkpointOf({}), meta, {});
        const other = new CkptSaver(store);
        await Promise.all(
          Array.from({ length: 24 }, (_, i) =>
            (i % 2 ? saver : other).putWrites(
              at,
              [['found', i]],
              `task-${String(i).padStart(2, '0')}`,
            ),
          ),
        );
        const writes = (await saver.getTuple(at))?.pendingWrites ?? [];
        expect(writes.map((w) => w[2])).toEqual(Array.from({ length: 24 }, (_, i) => i));
      });

    it('does not bring a thread back with a write that lands after deleteThread', async () => {
      const at = await saver.put(root(), checkpointOf({}), meta, {});
      await saver.deleteThread(thread);
      await saver.putWrites(at, [['late', 1]], 'task');
      expect(await saver.getTuple(root())).toBeUndefined();
      const id = at.configurable?.checkpoint_id as string;
      const key = `w:${JSON.stringify([thread, ''])}:${id}`;
      expect(await store.state('langgraph').get(key)).toBeUndefined();
      expect(await store.info(JSON.stringify([thread, '']))).toBeNull();
    });
    if (!backend.singleWriter)
      it('leaves no write of a deleted checkpoint behind when writes land while deleteThread runs', async () => {
        const at = await saver.put(root(), checkpointOf({}), meta, {});
        const other = new CkptSaver(store);
        await Promise.all([
          saver.deleteThread(thread),
          ...Array.from({ length: 10 }, (_, i) => other.putWrites(at, [['late', i]], `task-${i}`)),
        ]);
        const id = at.configurable?.checkpoint_id as string;
        const key = `w:${JSON.stringify([thread, ''])}:${id}`;
        expect(await store.state('langgraph').get(key)).toBeUndefined();
        expect(await saver.getTuple(root())).toBeUndefined();
      });

    it("keeps the writes that reach a new thread before its first checkpoint (LangGraph's 'async' durability)", async () => {
      const first = checkpointOf({});
      const at = {
        configurable: { thread_id: thread, checkpoint_ns: '', checkpoint_id: first.id },
      };
      await saver.putWrites(at, [['early', 1]], 'task');
      await saver.put(root(), first, meta, {});
      expect((await new CkptSaver(store).getTuple(at))?.pendingWrites).toEqual([
        ['task', 'early', 1],
      ]);
    });

    it('keeps the new writes of a thread id used again after deleteThread', async () => {
      const old = await saver.put(root(), checkpointOf({}), meta, {});
      await saver.putWrites(old, [['old', 1]], 'task');
      await saver.deleteThread(thread);
      // The thread again: writes before its first checkpoint, and after it.
      const first = checkpointOf({});
      const at = {
        configurable: { thread_id: thread, checkpoint_ns: '', checkpoint_id: first.id },
      };
      await saver.putWrites(at, [['early', 2]], 'task-a');
      await saver.put(root(), first, meta, {});
      await saver.putWrites(at, [['late', 3]], 'task-b');
      expect((await new CkptSaver(store).getTuple(root()))?.pendingWrites).toEqual([
        ['task-a', 'early', 2],
        ['task-b', 'late', 3],
      ]);
      expect(await saver.getTuple(old)).toBeUndefined();
    });
  });

  describe('channel values', () => {
    it('stores each (channel, version) once and rebuilds checkpoints from their ancestors', async () => {
      const big = 'x'.repeat(20_000);
      const c1 = await saver.put(root(), checkpointOf({ big: [1, big], n: [1, 1] }), meta, {
        big: 1,
        n: 1,
      });
      const c2 = await saver.put(c1, checkpointOf({ big: [1, big], n: [2, 2] }), meta, { n: 2 });
      const c3 = await saver.put(c2, checkpointOf({ big: [1, big], n: [3, 3] }), meta, { n: 3 });
      for (const [config, n] of [
        [c1, 1],
        [c2, 2],
        [c3, 3],
      ] as const) {
        expect((await saver.getTuple(config))?.checkpoint.channel_values).toEqual({ big, n });
      }
      // The big value is held by the first checkpoint alone.
      const session = JSON.stringify([thread, '']);
      const sizes = [];
      for (const seq of [1, 2, 3])
        sizes.push(JSON.stringify((await store.load(session, seq))?.data).length);
      expect(sizes[0]).toBeGreaterThan(20_000);
      expect(sizes[1]).toBeLessThan(2_000);
      expect(sizes[2]).toBeLessThan(2_000);
    });

    it('takes unchanged values from the parent named in the config, not the latest', async () => {
      const c1 = await saver.put(root(), checkpointOf({ v: [1, 'one'] }), meta, { v: 1 });
      const c2 = await saver.put(c1, checkpointOf({ v: [2, 'two'] }), meta, { v: 2 });
      // A branch from c1 that leaves v alone reads c1's value; one at c2's version reads none.
      const fromC1 = await saver.put(c1, checkpointOf({ v: [1, 'one'] }), meta, {});
      const stale = await saver.put(c1, checkpointOf({ v: [2, 'two'] }), meta, {});
      expect((await saver.getTuple(fromC1))?.checkpoint.channel_values).toEqual({ v: 'one' });
      expect((await saver.getTuple(fromC1))?.parentConfig).toEqual(c1);
      expect((await saver.getTuple(stale))?.checkpoint.channel_values).toEqual({});
      expect((await saver.getTuple(c2))?.checkpoint.channel_values).toEqual({ v: 'two' });
      // A new saver (a restarted process) has no memory of the last put, and reads the same.
      const fresh = new CkptSaver(store);
      const next = await fresh.put(c2, checkpointOf({ v: [2, 'two'], w: [1, 'w'] }), meta, {
        w: 1,
      });
      expect((await fresh.getTuple(next))?.checkpoint.channel_values).toEqual({ v: 'two', w: 'w' });
    });

    it('holds a growing list as tails on its last version, and reads every version back cold', async () => {
      const message = (i: number) => ({
        role: i % 2 ? 'agent' : 'user',
        text: `message ${i} `.repeat(20),
      });
      const lists: unknown[][] = [];
      let config = root();
      const configs: RunnableConfig[] = [];
      for (let i = 0; i < 40; i++) {
        const list = [...(lists.at(-1) ?? []), message(2 * i), message(2 * i + 1)];
        lists.push(list);
        config = await saver.put(config, checkpointOf({ messages: [i + 1, list] }), meta, {
          messages: i + 1,
        });
        configs.push(config);
      }
      const session = JSON.stringify([thread, '']);
      const whole = JSON.stringify(lists.at(-1)).length;
      let stored = 0;
      for (let seq = 1; seq <= 40; seq++)
        stored += JSON.stringify((await store.load(session, seq))?.data).length;
      // Held whole every 17th version, as tails between: a fraction of 40 whole lists.
      expect(stored).toBeLessThan(whole * 8);
      const cold = new CkptSaver(store);
      for (const [i, c] of configs.entries()) {
        expect((await cold.getTuple(c))?.checkpoint.channel_values.messages).toEqual(lists[i]);
      }
      // Pruned to the last five, the kept ones still read back whole, cold too.
      await saver.prune(thread, { keepLast: 5 });
      for (const [i, c] of configs.slice(-5).entries()) {
        expect(
          (await new CkptSaver(store).getTuple(c))?.checkpoint.channel_values.messages,
        ).toEqual(lists[35 + i]);
      }
      // And a later put on the pruned thread goes on as before.
      const next = [...lists.at(-1)!, message(80)];
      const after = await saver.put(config, checkpointOf({ messages: [41, next] }), meta, {
        messages: 41,
      });
      expect(
        (await new CkptSaver(store).getTuple(after))?.checkpoint.channel_values.messages,
      ).toEqual(next);
    });

    // More than a thousand checkpoints to point to takes that many puts; what it proves is the
    // saver's, the same on every backend.
    if (backend.name === 'memory')
      it('holds values whole where a checkpoint would point to more checkpoints than it may need', async () => {
        const channels = MAX_NEEDS + 1;
        const values: Record<string, [number, unknown]> = {};
        let config = root();
        for (let i = 0; i <= channels; i++) {
          // Each put changes one channel of its own; the last changes none.
          if (i < channels) values[`c${i}`] = [1, i];
          const changed = i < channels ? { [`c${i}`]: 1 } : {};
          config = await saver.put(config, checkpointOf(values), meta, changed);
        }
        const session = JSON.stringify([thread, '']);
        await store.prune(session, { keepLast: 1 });
        const read = await new CkptSaver(store).getTuple(config);
        expect(read?.checkpoint.channel_values).toEqual(
          Object.fromEntries(Object.entries(values).map(([k, [, v]]) => [k, v])),
        );
      });

    it('round-trips values JSON cannot carry through serde', async () => {
      const values = {
        when: new Date('2026-01-02T03:04:05.000Z'),
        bytes: new Uint8Array([0, 255, 7]),
      };
      const c = await saver.put(
        root(),
        checkpointOf({ when: [1, values.when], bytes: [1, values.bytes] }),
        meta,
        { when: 1, bytes: 1 },
      );
      const read = (await saver.getTuple(c))?.checkpoint.channel_values;
      expect(new Uint8Array(read?.bytes as Uint8Array)).toEqual(values.bytes);
      expect(new Date(read?.when as string).toISOString()).toBe(values.when.toISOString());
    });
  });

  describe('branches', () => {
    it("puts each checkpoint after its own parent, so the session's history is LangGraph's branch", async () => {
      const session = JSON.stringify([thread, '']);
      const c1 = await saver.put(root(), checkpointOf({}), meta, {});
      const c2 = await saver.put(c1, checkpointOf({}), meta, {});
      await saver.put(c1, checkpointOf({}), meta, {});
      expect(await store.history(session)).toEqual([1, 3]);
      // Back on the first branch, from a saver that has seen none of it.
      await new CkptSaver(store).put(c2, checkpointOf({}), meta, {});
      expect(await store.history(session)).toEqual([1, 2, 4]);
      expect((await saver.getTuple(root()))?.parentConfig).toEqual(c2);
    });
  });

  describe('prune', () => {
    it('keeps the newest checkpoints whole, and the one holding a value they use', async () => {
      let config = await saver.put(
        root(),
        checkpointOf({ constant: [1, 'kept'], n: [1, 0] }),
        meta,
        {
          constant: 1,
          n: 1,
        },
      );
      const ids = [config.configurable?.checkpoint_id as string];
      for (let i = 1; i < 10; i++) {
        config = await saver.put(
          config,
          checkpointOf({ constant: [1, 'kept'], n: [i + 1, i] }),
          meta,
          {
            n: i + 1,
          },
        );
        ids.push(config.configurable?.checkpoint_id as string);
        await saver.putWrites(config, [['w', i]], 'task');
      }
      // The first checkpoint holds `constant`, which the kept ones point to: it stays.
      expect(await saver.prune(thread, { keepLast: 3 })).toBe(6);
      const listed = [];
      for await (const t of saver.list(root())) listed.push(t);
      expect(listed.map((t) => t.checkpoint.id)).toEqual([...ids.slice(7).reverse(), ids[0]]);
      for (const [i, t] of listed.slice(0, 3).entries()) {
        expect(t.checkpoint.channel_values).toEqual({ constant: 'kept', n: 9 - i });
      }
      expect(listed[3]?.checkpoint.channel_values).toEqual({ constant: 'kept', n: 0 });
      // The removed checkpoints' writes went with them; the kept ones' stayed.
      const session = JSON.stringify([thread, '']);
      expect(await store.state('langgraph').get(`w:${session}:${ids[3]}`)).toBeUndefined();
      expect(await store.state('langgraph').get(`w:${session}:${ids[8]}`)).toBeDefined();
      // Pruning again removes nothing, and a later checkpoint still finds the kept value.
      expect(await saver.prune(thread, { keepLast: 3 })).toBe(0);
      const next = await new CkptSaver(store).put(
        config,
        checkpointOf({ constant: [1, 'kept'], n: [11, 10] }),
        meta,
        { n: 11 },
      );
      expect((await saver.getTuple(next))?.checkpoint.channel_values).toEqual({
        constant: 'kept',
        n: 10,
      });
      expect(await saver.prune(thread, { keepLast: 1 })).toBe(3);
      expect((await saver.getTuple(next))?.checkpoint.channel_values).toEqual({
        constant: 'kept',
        n: 10,
      });
      expect(await store.info(session)).toMatchObject({ checkpoints: 2 });
    });

    it('refuses a keepLast that is not a positive integer, removing nothing', async () => {
      await saver.put(root(), checkpointOf({}), meta, {});
      for (const bad of [0, -1, 1.5, Number.NaN, '2', undefined]) {
        await expect(saver.prune(thread, { keepLast: bad as number })).rejects.toSatisfy((err) =>
          isCkptError(err, 'INVALID_ARGUMENT'),
        );
      }
      expect((await store.info(JSON.stringify([thread, ''])))?.checkpoints).toBe(1);
    });
  });

  describe('deleteThread', () => {
    it('removes every namespace of the thread and its writes, and no other thread', async () => {
      const child = { configurable: { thread_id: thread, checkpoint_ns: 'child:1' } };
      const a = await saver.put(root(), checkpointOf({}), meta, {});
      const b = await saver.put(child, checkpointOf({}), meta, {});
      await saver.putWrites(b, [['x', 1]], 'task');
      const other = { configurable: { thread_id: `${thread}-other`, checkpoint_ns: '' } };
      await saver.put(other, checkpointOf({}), meta, {});
      await saver.deleteThread(thread);
      expect(await saver.getTuple(a)).toBeUndefined();
      expect(await saver.getTuple(b)).toBeUndefined();
      expect(await saver.getTuple(other)).toBeDefined();
      const bId = b.configurable?.checkpoint_id as string;
      const key = `w:${JSON.stringify([thread, 'child:1'])}:${bId}`;
      expect(await store.state('langgraph').get(key)).toBeUndefined();
      expect(await store.state('langgraph').get(`t:${thread}`)).toBeUndefined();
    });
  });

  describe('thread ids', () => {
    it('takes a thread id of the longest length allowed, with its writes', async () => {
      const config = { configurable: { thread_id: 't'.repeat(209), checkpoint_ns: '' } };
      const at = await saver.put(config, checkpointOf({ v: [1, 'v'] }), meta, { v: 1 });
      await saver.putWrites(at, [['w', 1]], 'task');
      const tuple = await new CkptSaver(store).getTuple(config);
      expect(tuple?.checkpoint.channel_values).toEqual({ v: 'v' });
      expect(tuple?.pendingWrites).toEqual([['task', 'w', 1]]);
      await saver.deleteThread('t'.repeat(209));
      expect(await saver.getTuple(config)).toBeUndefined();
    });
  });

  describe('errors', () => {
    it('refuses a put or putWrites without a thread, or writes without a checkpoint id', async () => {
      const expectInvalid = (p: Promise<unknown>) =>
        expect(p).rejects.toSatisfy((err) => isCkptError(err, 'INVALID_ARGUMENT'));
      await expectInvalid(saver.put({ configurable: {} }, checkpointOf({}), meta, {}));
      await expectInvalid(saver.putWrites({ configurable: { checkpoint_id: 'x' } }, [], 't'));
      await expectInvalid(saver.putWrites(root(), [], 't'));
      expect(() => new CkptSaver({} as never)).toThrow(/CheckpointStore or a store URL/);
      expect(() => new CkptSaver(store, { transcript: 'no' as never })).toThrow(
        /options\.transcript must be true or false/,
      );
    });
  });
});

describe('a thread id too long for a session', () => {
  const saver = new CkptSaver('memory:');
  afterAll(() => saver.close());
  const configOf = (thread: string, ns = '') => ({
    configurable: { thread_id: thread, checkpoint_ns: ns },
  });
  const refusal = async (call: Promise<unknown>) => {
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isCkptError(err, 'INVALID_ARGUMENT')).toBe(true);
    return err as CkptError;
  };

  it('is refused in terms of config.configurable.thread_id, with its length and the limit', async () => {
    const graph = new StateGraph(
      Annotation.Root({ n: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) }),
    )
      .addNode('step', () => ({ n: 1 }))
      .addEdge(START, 'step')
      .addEdge('step', END)
      .compile({ checkpointer: saver });
    const err = await refusal(graph.invoke({ n: 1 }, configOf('x'.repeat(210))));
    expect(err.message).toMatch(
      /^config\.configurable\.thread_id is 210 characters long; it can be at most 209\./,
    );
    expect(err.details).toEqual({
      argument: 'config.configurable.thread_id',
      length: 210,
      max: 209,
    });
    expect((await (await saver.store).sessions()).items).toEqual([]);
  });

  it('names the limit that is left beside the namespace', async () => {
    const err = await refusal(
      saver.put(configOf('x'.repeat(203), 'child:1'), checkpointOf({}), meta, {}),
    );
    expect(err.message).toContain(
      'is 203 characters long; it can be at most 202 with config.configurable.checkpoint_ns of 7 characters.',
    );
    expect(err.details.max).toBe(202);
  });

  it('counts a quote as its escape, and says so', async () => {
    const err = await refusal(saver.getTuple(configOf('"'.repeat(105))));
    expect(err.message).toContain('is 105 characters long (210 as stored:');
    expect(err.details).toMatchObject({ length: 210, max: 209 });
  });

  it('is refused by deleteThread and prune in terms of threadId', async () => {
    for (const call of [
      saver.deleteThread('x'.repeat(300)),
      saver.prune('x'.repeat(300), { keepLast: 1 }),
    ]) {
      const err = await refusal(call);
      expect(err.message).toMatch(/^threadId is 300 characters long; it can be at most 209\./);
    }
  });
});

describe('a checkpoint too large with its transcript', () => {
  it('is written without the transcript', async () => {
    const store = await openStore('memory:', { maxPayloadBytes: 50_000 });
    const saver = new CkptSaver(store);
    const text = 'x'.repeat(30_000);
    const checkpoint = checkpointOf({
      messages: [1, [new HumanMessage({ content: text, id: 'm' })]],
    });
    const config = { configurable: { thread_id: 'big', checkpoint_ns: '' } };
    const at = await saver.put(config, checkpoint, meta, { messages: 1 });
    const read = (await saver.getTuple(at))?.checkpoint.channel_values.messages as HumanMessage[];
    expect(read.map((m) => m.content)).toEqual([text]);
    expect((await store.transcript(JSON.stringify(['big', '']))).items).toEqual([]);
    await store.close();
  });
});

describe('CkptSaver from a URL', () => {
  it('opens the store itself and closes it', async () => {
    const saver = await CkptSaver.open(`sqlite:${join(dir, 'from-url.db')}`);
    const config = await saver.put(
      { configurable: { thread_id: 't' } },
      checkpointOf({ a: [1, 'a'] }),
      meta,
      { a: 1 },
    );
    expect((await saver.getTuple(config))?.checkpoint.channel_values).toEqual({ a: 'a' });
    await saver.close();
    await expect((await saver.store).load('x')).rejects.toSatisfy((err) =>
      isCkptError(err, 'CLOSED'),
    );
  });

  it('names the problem of a bad URL at the first call', async () => {
    const saver = new CkptSaver('nosuch://x');
    await expect(saver.getTuple({ configurable: { thread_id: 't' } })).rejects.toSatisfy((err) =>
      isCkptError(err, 'INVALID_ARGUMENT'),
    );
  });
});
