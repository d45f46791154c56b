/**
 * `tagKeys` on every backend that finds sessions by their tags: the named metadata keys become
 * the tags of each thread's sessions, and `list` without a thread and with a filter on them
 * reads only the threads the tag index finds, listing exactly what the walk of every thread
 * lists (a saver without `tagKeys` on the same store). The graphs run as users run them: new
 * threads started at once under LangGraph's default durability, with `metadata` at `invoke`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type CheckpointBackend,
  CheckpointStore,
  type CkptError,
  isCkptError,
  kvBackend,
} from '@ckpt/core';
import { CkptSaver } from '@ckpt/langgraph';
import { memory, memoryKv } from '@ckpt/memory';
import { STORES, storesOn } from '@ckpt/test-stores';
import { HumanMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { Command } from '@langchain/langgraph';
import {
  type CheckpointListOptions,
  type CheckpointTuple,
  emptyCheckpoint,
  uuid6,
} from '@langchain/langgraph-checkpoint';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { agentGraph, describeState } from './support/agent-graph.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-langgraph-tags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NAMESPACE = 'lg_tags';
const TAG_KEYS = ['user_id'];
const RETAGGED = { 'langgraph.retagged': '1' };

/** Every tuple a listing gives. */
async function listed(
  saver: CkptSaver,
  config: RunnableConfig,
  options?: CheckpointListOptions,
): Promise<CheckpointTuple[]> {
  const out: CheckpointTuple[] = [];
  for await (const tuple of saver.list(config, options)) out.push(tuple);
  return out;
}

/** The `user_id` of a checkpoint's metadata, which LangGraph's type does not name. */
const userOf = (metadata: object | undefined) =>
  (metadata as Record<string, unknown> | undefined)?.user_id;
const idOf = (tuple: CheckpointTuple) => tuple.config.configurable?.checkpoint_id as string;
const sessionOf = (thread: string, ns = '') => JSON.stringify([thread, ns]);
const everyThread: RunnableConfig = { configurable: {} };

/** A config for `thread`, run for `user` (as LangGraph takes it: metadata given to invoke). */
const runConfig = (thread: string, metadata: Record<string, unknown>) => ({
  configurable: { thread_id: thread },
  metadata,
});

/** Ask thread `thread` its question as `user`, then approve: the agent graph to its end. */
async function runAgent(saver: CkptSaver, thread: string, metadata: Record<string, unknown>) {
  const graph = agentGraph(saver);
  const question = new HumanMessage({ content: 'What is 2 + 3?', id: 'question' });
  await graph.invoke({ messages: [question] }, runConfig(thread, metadata));
  return graph.invoke(new Command({ resume: true }), runConfig(thread, metadata));
}

/** A unique name for this test's threads and users: the store is shared across tests. */
const runId = () => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/** A checkpoint put straight through the saver, for the cases that need no graph. */
async function putOne(
  saver: CkptSaver,
  config: RunnableConfig,
  metadata: Record<string, unknown> = {},
): Promise<RunnableConfig> {
  const checkpoint = { ...emptyCheckpoint(), id: uuid6(-3) };
  return saver.put(config, checkpoint, { source: 'input', step: -1, parents: {}, ...metadata }, {});
}

describe.each(STORES)('tagKeys on $name', (backend) => {
  const stores = storesOn(backend, NAMESPACE, dir, ['langgraph']);
  afterAll(stores.closeAll);
  afterEach(stores.closeOpened);

  /** A store that finds sessions by tags, or undefined after checking that tagKeys is refused. */
  async function taggingStore(): Promise<CheckpointStore | undefined> {
    const store = await stores.open();
    const { tags, listSessions } = store.capabilities;
    if (tags && listSessions) return store;
    expect(() => new CkptSaver(store, { tagKeys: TAG_KEYS })).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED' }),
    );
    return undefined;
  }

  // Twelve agent runs to their end, and two walks of every thread: long on the slowest backends.
  it("lists a user's checkpoints across threads from the tag index, exactly as the walk of every thread lists them", {
    timeout: 180_000,
  }, async () => {
    const store = await taggingStore();
    if (store === undefined) return;
    const run = runId();
    const ann = `ann-${run}`;
    const bob = `bob-${run}`;
    const threads = Array.from({ length: 12 }, (_, i) => ({
      thread: `agent-${run}-${String(i).padStart(2, '0')}`,
      user: i % 3 === 0 ? ann : bob,
    }));
    const saver = new CkptSaver(store, { tagKeys: TAG_KEYS });
    const finished = await Promise.all(
      threads.map(({ thread, user }) => runAgent(saver, thread, { user_id: user })),
    );
    expect(finished.map((s) => describeState(s as never).answer)).toEqual(
      threads.map(() => 'The answer is 5.'),
    );
    // A later run without the key leaves the thread's tag, and its checkpoints lack the key.
    await runAgent(saver, threads[0]!.thread, {});

    const annThreads = threads.filter((t) => t.user === ann).map((t) => t.thread);
    for (const thread of annThreads) {
      expect((await store.info(sessionOf(thread)))?.tags).toEqual({ user_id: ann });
    }
    const walker = new CkptSaver(store);
    const filter = { user_id: ann };
    const indexed = await listed(saver, everyThread, { filter });
    expect(indexed).toEqual(await listed(walker, everyThread, { filter }));

    // What LangGraph reads of each thread: its history, with the metadata given at invoke.
    const graph = agentGraph(new CkptSaver(store));
    const roots = indexed.filter((t) => t.config.configurable?.checkpoint_ns === '');
    const expected: string[] = [];
    for (const thread of annThreads.sort()) {
      for await (const snapshot of graph.getStateHistory({ configurable: { thread_id: thread } })) {
        if (userOf(snapshot.metadata) === ann)
          expected.push(snapshot.config.configurable!.checkpoint_id as string);
      }
    }
    expect(roots.map(idOf)).toEqual(expected);
    // Each of ann's four threads: at least the checkpoints of the run to the interrupt, and more
    // of the resumed run.
    expect(roots.length).toBeGreaterThanOrEqual(annThreads.length * 4);
    const state = await graph.getState(roots[0]!.config);
    expect(userOf(state.metadata)).toBe(ann);
    expect(state.values).toEqual(roots[0]!.checkpoint.channel_values);
    // The summary subgraph's checkpoints carry the run's metadata too, and are listed.
    const subgraphs = indexed.filter((t) => t.config.configurable?.checkpoint_ns !== '');
    expect(subgraphs.length).toBeGreaterThan(0);
    for (const tuple of subgraphs) {
      const { thread_id, checkpoint_ns } = tuple.config.configurable!;
      expect((await store.info(sessionOf(thread_id, checkpoint_ns)))?.tags).toEqual(filter);
    }
    expect(indexed.every((t) => userOf(t.metadata) === ann)).toBe(true);

    // limit, before, a namespace, and filters with more keys list what the walk lists: the walk's
    // full listing cut as LangGraph defines each option.
    const below = idOf(indexed[3]!);
    const cases: [RunnableConfig, CheckpointListOptions, CheckpointTuple[]][] = [
      [everyThread, { filter, limit: 5 }, indexed.slice(0, 5)],
      [everyThread, { filter, limit: 1 }, indexed.slice(0, 1)],
      [everyThread, { filter, before: indexed[3]!.config }, indexed.filter((t) => idOf(t) < below)],
      [
        everyThread,
        { filter, before: indexed[3]!.config, limit: 2 },
        indexed.filter((t) => idOf(t) < below).slice(0, 2),
      ],
      [{ configurable: { checkpoint_ns: '' } }, { filter }, roots],
      [
        { configurable: { checkpoint_ns: '' } },
        { filter: { ...filter, source: 'input' } },
        roots.filter((t) => t.metadata?.source === 'input'),
      ],
      [
        everyThread,
        { filter: { ...filter, source: 'loop', step: 1 } },
        indexed.filter((t) => t.metadata?.source === 'loop' && t.metadata.step === 1),
      ],
      [
        { configurable: { checkpoint_id: idOf(indexed[2]!) } },
        { filter },
        indexed.filter((t) => idOf(t) === idOf(indexed[2]!)),
      ],
    ];
    for (const [config, options, expected] of cases) {
      const found = await listed(saver, config, options);
      expect(found.map(idOf), JSON.stringify(options)).toEqual(expected.map(idOf));
      expect(found.length, JSON.stringify(options)).toBeGreaterThan(0);
    }
    const bobs = { filter: { user_id: bob } };
    expect((await listed(saver, everyThread, bobs)).map(idOf)).toEqual(
      (await listed(walker, everyThread, bobs)).map(idOf),
    );
    expect(await listed(saver, everyThread, { filter: { user_id: `nobody-${run}` } })).toEqual([]);
  });

  it('reads only the sessions the tag index finds', async () => {
    const store = await taggingStore();
    if (store === undefined) return;
    const run = runId();
    const saver = new CkptSaver(store, { tagKeys: TAG_KEYS });
    const users = ['ann', 'bob', 'bob', 'bob'].map((u) => `${u}-${run}`);
    await Promise.all(
      users.map((user, i) => runAgent(saver, `read-${run}-${i}`, { user_id: user })),
    );
    const filter = { user_id: users[0] };

    /** The sessions whose checkpoints a listing reads, and how it lists sessions. */
    const reads = async (by: CkptSaver) => {
      const sessions = vi.spyOn(store, 'sessions');
      const lists = vi.spyOn(store, 'list');
      try {
        const found = await listed(by, everyThread, { filter });
        return {
          found: found.map(idOf),
          wheres: sessions.mock.calls.map(([page]) => page?.where),
          threads: new Set(lists.mock.calls.map(([id]) => JSON.parse(id)[0])),
        };
      } finally {
        sessions.mockRestore();
        lists.mockRestore();
      }
    };
    const indexed = await reads(saver);
    const walked = await reads(new CkptSaver(store));
    expect(indexed.found).toEqual(walked.found);
    expect(indexed.found.length).toBeGreaterThan(0);
    expect(indexed.wheres).toEqual([filter, RETAGGED]);
    expect([...indexed.threads]).toEqual([`read-${run}-0`]);
    // The walk reads every thread: the one above only what the index found.
    expect(walked.threads.has(`read-${run}-1`)).toBe(true);
  });

  it("still lists a thread's earlier checkpoints after its tagged value changed", async () => {
    const store = await taggingStore();
    if (store === undefined) return;
    const run = runId();
    const [ann, carol] = [`ann-${run}`, `carol-${run}`];
    const saver = new CkptSaver(store, { tagKeys: TAG_KEYS });
    const thread = `moved-${run}`;
    await runAgent(saver, thread, { user_id: ann });
    await runAgent(saver, `stays-${run}`, { user_id: ann });
    await runAgent(saver, thread, { user_id: carol });
    expect((await store.info(sessionOf(thread)))?.tags).toEqual({ user_id: carol, ...RETAGGED });
    // A saver that did not see the change reads the session's tags before its first put there.
    await runAgent(new CkptSaver(store, { tagKeys: TAG_KEYS }), thread, { user_id: carol });
    expect((await store.info(sessionOf(thread)))?.tags).toEqual({ user_id: carol, ...RETAGGED });

    const walker = new CkptSaver(store);
    for (const user of [ann, carol]) {
      const indexed = await listed(saver, everyThread, { filter: { user_id: user } });
      expect(indexed).toEqual(await listed(walker, everyThread, { filter: { user_id: user } }));
      expect(indexed.some((t) => t.config.configurable?.thread_id === thread)).toBe(true);
    }
  });

  it('tags string values only, and lists other values by walking every thread', async () => {
    const store = await taggingStore();
    if (store === undefined) return;
    const run = runId();
    const saver = new CkptSaver(store, { tagKeys: ['user_id', 'org'] });
    const long = `${run}-${'x'.repeat(300)}`;
    const values = [7, true, long, `nul-${run}\0`];
    const written: string[] = [];
    for (const [i, value] of values.entries()) {
      const thread = `odd-${run}-${i}`;
      const at = await putOne(saver, { configurable: { thread_id: thread } }, { user_id: value });
      written.push(at.configurable?.checkpoint_id);
      expect((await store.info(sessionOf(thread)))?.tags).toEqual({});
    }
    for (const [i, value] of values.entries()) {
      const found = await listed(saver, everyThread, { filter: { user_id: value } });
      expect(found.map(idOf), String(value)).toEqual([written[i]]);
    }
    // Among several tagged keys, the index takes those whose values can be tags.
    const mixed = `mixed-${run}`;
    const at = await putOne(
      saver,
      { configurable: { thread_id: mixed } },
      { user_id: 7, org: run },
    );
    expect((await store.info(sessionOf(mixed)))?.tags).toEqual({ org: run });
    const found = await listed(saver, everyThread, { filter: { user_id: 7, org: run } });
    expect(found.map(idOf)).toEqual([at.configurable?.checkpoint_id]);
  });

  it("takes a named key from the config's metadata, else its configurable, and no other key", async () => {
    const store = await taggingStore();
    if (store === undefined) return;
    const run = runId();
    const saver = new CkptSaver(store, { tagKeys: ['user_id', 'team'] });
    const put = async (
      config: RunnableConfig,
      metadata: Record<string, unknown> = {},
      by: CkptSaver = saver,
    ) => (await by.getTuple(await putOne(by, config, metadata)))?.metadata;
    const thread = (name: string) => ({ thread_id: `${name}-${run}` });

    const fromMetadata = await put({
      configurable: { ...thread('a'), user_id: 'from-configurable' },
      metadata: { user_id: 'from-metadata', other: 'x' },
    });
    expect(fromMetadata).toEqual({
      source: 'input',
      step: -1,
      parents: {},
      user_id: 'from-metadata',
    });
    const fromConfigurable = await put({
      configurable: { ...thread('b'), user_id: 'from-configurable', team: 3 },
    });
    expect(fromConfigurable).toMatchObject({ user_id: 'from-configurable', team: 3 });
    const own = await put(
      { configurable: { ...thread('c'), user_id: 'from-configurable' }, metadata: { team: 't' } },
      { user_id: 'own' },
    );
    expect(own).toMatchObject({ user_id: 'own', team: 't' });
    expect((await store.info(sessionOf(`c-${run}`)))?.tags).toEqual({ team: 't', user_id: 'own' });
    // Objects are not copied; a saver without tagKeys stores the metadata as given.
    const object = await put({ configurable: thread('d'), metadata: { user_id: { id: 1 } } });
    expect(object).not.toHaveProperty('user_id');
    const plain = await put(
      { configurable: thread('e'), metadata: { user_id: 'u' } },
      {},
      new CkptSaver(store),
    );
    expect(plain).toEqual({ source: 'input', step: -1, parents: {} });
  });

  it('gives a thread made anew its tags: after deleteThread, and after another process deleted it', async () => {
    const store = await taggingStore();
    if (store === undefined) return;
    const run = runId();
    const saver = new CkptSaver(store, { tagKeys: TAG_KEYS });
    const thread = `again-${run}`;
    const config = { configurable: { thread_id: thread }, metadata: { user_id: `ann-${run}` } };
    await putOne(saver, config);

    await saver.deleteThread(thread);
    await putOne(saver, { ...config, metadata: { user_id: `bob-${run}` } });
    // A new session: the tag of the deleted one does not make it RETAGGED.
    expect((await store.info(sessionOf(thread)))?.tags).toEqual({ user_id: `bob-${run}` });

    // Another saver deletes the thread; this one, which knows its tags, writes on its parent.
    const again = await putOne(saver, { ...config, metadata: { user_id: `bob-${run}` } });
    await new CkptSaver(store).deleteThread(thread);
    await putOne(saver, { ...again, metadata: { user_id: `bob-${run}` } });
    expect((await store.info(sessionOf(thread)))?.tags).toEqual({ user_id: `bob-${run}` });
    const filter = { user_id: `bob-${run}` };
    expect(await listed(saver, everyThread, { filter })).toHaveLength(1);
  });

  it('tags a thread again at its next checkpoint after its tags were changed from outside', {
    timeout: 60_000,
  }, async () => {
    const store = await taggingStore();
    if (store === undefined) return;
    const run = runId();
    const saver = new CkptSaver(store, { tagKeys: TAG_KEYS });
    const thread = `cleared-${run}`;
    const filter = { user_id: `eve-${run}` };
    await runAgent(saver, thread, filter);
    expect((await store.info(sessionOf(thread)))?.tags).toEqual(filter);
    // As `ckpt tag --thread ... --clear` does; this saver still remembers the tags it wrote.
    await store.setTags(sessionOf(thread), {});
    // The root namespace's checkpoints (the graph's subgraph namespaces keep their tags).
    const root: RunnableConfig = { configurable: { checkpoint_ns: '' } };
    expect(await listed(saver, root, { filter })).toEqual([]);
    await runAgent(saver, thread, filter);
    expect((await store.info(sessionOf(thread)))?.tags).toEqual(filter);
    const found = await listed(saver, root, { filter });
    expect(found.length).toBeGreaterThan(0);
    expect(found).toEqual(await listed(new CkptSaver(store), root, { filter }));
  });

  it("lists no session the saver did not record, as the walk of every thread doesn't", async () => {
    const store = await taggingStore();
    if (store === undefined) return;
    const run = runId();
    const tags = { user_id: `ann-${run}` };
    const saver = new CkptSaver(store, { tagKeys: TAG_KEYS });
    await store.checkpoint(`chat-${run}`, { text: 'not a thread' }, { tags });
    await store.checkpoint(sessionOf(`unrecorded-${run}`), { text: 'no saver wrote it' }, { tags });
    const recorded = await putOne(saver, {
      configurable: { thread_id: `t-${run}` },
      metadata: tags,
    });
    const found = await listed(saver, everyThread, { filter: tags });
    expect(found.map(idOf)).toEqual([recorded.configurable?.checkpoint_id]);
    expect(found).toEqual(await listed(new CkptSaver(store), everyThread, { filter: tags }));
  });
});

describe('tagKeys', () => {
  const store = new CheckpointStore(memory());
  const refused = (tagKeys: unknown) => {
    try {
      new CkptSaver(store, { tagKeys: tagKeys as string[] });
    } catch (err) {
      return err as CkptError;
    }
    throw new Error(`tagKeys ${JSON.stringify(tagKeys)} was taken`);
  };

  it('refuses what cannot be tag keys, naming options.tagKeys', () => {
    const keys = Array.from({ length: 16 }, (_, i) => `k${i}`);
    for (const bad of [
      'user_id',
      ['user id'],
      [''],
      ['x'.repeat(65)],
      [7],
      keys,
      ['a', 'a'],
      ['langgraph.retagged'],
    ]) {
      const err = refused(bad);
      expect(isCkptError(err, 'INVALID_ARGUMENT'), String(err)).toBe(true);
      expect(err.details.argument).toBe('options.tagKeys');
    }
    expect(() => new CkptSaver(store, { tagKeys: keys.slice(0, 15) })).not.toThrow();
    expect(() => new CkptSaver(store, { tagKeys: ['a.b:c-d_E9'] })).not.toThrow();
  });

  it('refuses an unknown option, naming it and the options there are', () => {
    const err = (() => {
      try {
        new CkptSaver(store, { tagkeys: TAG_KEYS } as never);
      } catch (e) {
        return e as CkptError;
      }
    })();
    expect(isCkptError(err, 'INVALID_ARGUMENT')).toBe(true);
    expect(err?.message).toBe(
      'CkptSaver options has no option "tagkeys"; the options are serde, scope, transcript, tagKeys.',
    );
    expect(err?.details.argument).toBe('options');
    // Refused before a store is opened from a URL.
    expect(() => new CkptSaver('memory:', { tagkeys: TAG_KEYS } as never)).toThrow(/"tagkeys"/);
    expect(() => new CkptSaver(store, { scope: 'lg', tagKeys: undefined })).not.toThrow();
  });

  it('refuses a store that cannot find sessions by tags', () => {
    const noTags = new Proxy(memory(), {
      get(target, key) {
        if (key === 'setTags') return undefined;
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as CheckpointBackend;
    const getSetDelete = kvBackend(
      (({ get, set, delete: del }) => ({ get, set, delete: del }))(memoryKv()),
    );
    for (const [backend, capability] of [
      [noTags, 'tags'],
      [getSetDelete, 'listSessions'],
    ] as const) {
      const err = (() => {
        try {
          new CkptSaver(new CheckpointStore(backend), { tagKeys: TAG_KEYS });
        } catch (e) {
          return e as CkptError;
        }
      })();
      expect(isCkptError(err, 'UNSUPPORTED')).toBe(true);
      expect(err?.details).toEqual({ capability, argument: 'options.tagKeys' });
    }
  });
});
