/**
 * A LangGraph thread under core's own tools, on every backend: `store.prune` of its session
 * (what `ckpt prune --thread` runs), `fork` of it into a new thread, and `copyStore` into
 * another store. The saver stores each channel value once and has later checkpoints point to
 * it; each tool must keep what the checkpoints it keeps point to, so that LangGraph reads every
 * kept checkpoint back whole and the thread goes on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, copyStore } from '@ckpt/core';
import { CkptSaver } from '@ckpt/langgraph';
import { memory } from '@ckpt/memory';
import { STORES, storesOn } from '@ckpt/test-stores';
import type { BaseMessage } from '@langchain/core/messages';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { chatGraph, chatTurn, conversation, textsOf } from './support/chat-graph.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-langgraph-tools-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NAMESPACE = 'lg_tools';
const TURNS = 4;

const sessionOf = (threadId: string) => JSON.stringify([threadId, '']);
const configOf = (threadId: string) => ({ configurable: { thread_id: threadId } });
const newThread = (name: string) => `${name}-${Date.now()}-${Math.random()}`;

/** The messages of every checkpoint `getStateHistory` lists, by checkpoint id. */
async function historyOf(saver: CkptSaver, threadId: string): Promise<Map<string, string[]>> {
  const history = new Map<string, string[]>();
  for await (const snapshot of chatGraph(saver).getStateHistory(configOf(threadId))) {
    const messages = (snapshot.values as { messages?: BaseMessage[] }).messages ?? [];
    history.set(String(snapshot.config.configurable?.checkpoint_id), textsOf(messages));
  }
  return history;
}

/**
 * Read `threadId` through LangGraph with a new saver on `store`: its state holds the whole conversation of `turns` turns and the profile,
 * and every checkpoint still listed has the messages it had in `before`, listed and read by its id.
 */
async function expectWhole(
  store: CheckpointStore,
  threadId: string,
  turns: number,
  before: Map<string, string[]>,
) {
  const saver = new CkptSaver(store);
  const state = await chatGraph(saver).getState(configOf(threadId));
  const values = state.values as { messages: BaseMessage[]; profile: string };
  expect(textsOf(values.messages)).toEqual(conversation(turns));
  expect(values.profile).toBe('likes tea');
  const after = await historyOf(saver, threadId);
  expect(after.size).toBeGreaterThan(0);
  for (const [id, messages] of after) {
    expect(messages, id).toEqual(before.get(id));
    // Time travel reads it by its id, in a fork or a copy too, which carry no idempotency keys.
    const config = { configurable: { thread_id: threadId, checkpoint_id: id } };
    const byId = await chatGraph(saver).getState(config);
    expect(textsOf((byId.values as { messages?: BaseMessage[] }).messages ?? []), id).toEqual(
      messages,
    );
  }
}

describe.each(STORES)("a chat thread under core's tools on $name", (backend) => {
  const stores = storesOn(backend, NAMESPACE, dir, ['langgraph']);
  // Closed after each case: a case opens stores of its own, and a server takes few clients.
  afterEach(stores.closeAll);

  // Each case reads with a second store on the same data, whose savers have seen nothing of
  // the thread, as another process's would.

  /** A thread of TURNS turns on `store`, and the messages of each of its checkpoints. */
  async function chat(store: CheckpointStore, threadId: string) {
    const saver = new CkptSaver(store);
    for (let i = 0; i < TURNS; i++) await chatTurn(saver, threadId, i);
    return { saver, history: await historyOf(saver, threadId) };
  }

  it('reads back whole after store.prune keeps only its latest checkpoint, and goes on', async () => {
    const store = await stores.open();
    const other = await stores.open();
    const thread = newThread('pruned');
    const { saver, history } = await chat(store, thread);
    // What makes pruning unsafe without needs: the newest checkpoint holds its message list as
    // a tail on an earlier one's, and points to the checkpoint that holds the profile.
    const head = (await store.load(sessionOf(thread)))?.data as {
      values: Record<string, { on?: number[] }>;
      refs: Record<string, [unknown, number]>;
    };
    expect(head.values.messages?.on?.length).toBeGreaterThan(1);
    expect(head.refs.profile).toBeDefined();
    expect(await store.prune(sessionOf(thread), { keepLast: 1 })).toBeGreaterThan(0);
    await expectWhole(other, thread, TURNS, history);

    // The saver that wrote the thread goes on from what it remembers of the pruned one.
    const next = await chatTurn(saver, thread, TURNS);
    expect(textsOf(next.messages)).toEqual(conversation(TURNS + 1));
    // So does a new one, after a second prune.
    const longer = await historyOf(saver, thread);
    await store.prune(sessionOf(thread), { keepLast: 1 });
    await expectWhole(other, thread, TURNS + 1, longer);
    const last = await chatTurn(new CkptSaver(other), thread, TURNS + 1);
    expect(textsOf(last.messages)).toEqual(conversation(TURNS + 2));
    await saver.deleteThread(thread);
  });

  it("reads back whole after the saver's own prune, and goes on", async () => {
    const store = await stores.open();
    const other = await stores.open();
    const thread = newThread('saver-pruned');
    const { saver, history } = await chat(store, thread);
    expect(await saver.prune(thread, { keepLast: 1 })).toBeGreaterThan(0);
    await expectWhole(other, thread, TURNS, history);
    const next = await chatTurn(new CkptSaver(other), thread, TURNS);
    expect(textsOf(next.messages)).toEqual(conversation(TURNS + 1));
    await saver.deleteThread(thread);
  });

  it('reads back whole under the retention option and after a sweep, and goes on', async () => {
    const store = await stores.open();
    const other = await stores.open();
    const thread = newThread('retained');
    // Every session the saver writes keeps its newest checkpoint, pruned as it is written.
    const retained = new CheckpointStore(store.backend, { retention: { keepLast: 1 } });
    const turns = 8;
    const saver = new CkptSaver(retained);
    for (let i = 0; i < turns; i++) await chatTurn(saver, thread, i);
    const info = await store.info(sessionOf(thread));
    expect(info!.checkpoints).toBeLessThan(info!.head);
    const history = await historyOf(saver, thread);
    await expectWhole(other, thread, turns, history);

    // A sweep of the whole store prunes the thread to its newest checkpoint and what it needs
    // (on a store that can list its sessions; one that cannot refuses, removing nothing).
    const DAY = 86_400_000;
    await sweepOrRefuse(store, { idleFor: 30 * DAY, keepLast: 1 });
    expect((await store.info(sessionOf(thread)))!.checkpoints).toBeLessThanOrEqual(
      info!.checkpoints,
    );
    await expectWhole(other, thread, turns, history);
    const next = await chatTurn(new CkptSaver(other), thread, turns);
    expect(textsOf(next.messages)).toEqual(conversation(turns + 1));
    await saver.deleteThread(thread);
  });

  it("keeps a pinned checkpoint, whole, through the saver's prune and a sweep", async () => {
    const store = await stores.open();
    const other = await stores.open();
    const thread = newThread('pinned');
    const { saver, history } = await chat(store, thread);
    // A checkpoint from the middle of the thread; its id is the checkpoint's idempotency key.
    const ids = [...history.keys()];
    const pinnedId = ids[Math.floor(ids.length / 2)]!;
    const stored = await store.loadByKey(sessionOf(thread), pinnedId);
    await store.pin(sessionOf(thread), stored!.seq, { note: 'kept for review' });
    expect(await saver.prune(thread, { keepLast: 1 })).toBeGreaterThan(0);
    await sweepOrRefuse(store, { keepLast: 1 });
    const after = await historyOf(new CkptSaver(other), thread);
    expect(after.size).toBeLessThan(history.size);
    expect(after.has(pinnedId)).toBe(true);
    for (const [id, messages] of after) expect(messages, id).toEqual(history.get(id));
    const config = { configurable: { thread_id: thread, checkpoint_id: pinnedId } };
    const state = await chatGraph(new CkptSaver(other)).getState(config);
    expect(textsOf((state.values as { messages: BaseMessage[] }).messages)).toEqual(
      history.get(pinnedId),
    );
    await saver.deleteThread(thread);
  });

  it('forks a pruned thread into a new thread that reads back whole and goes on', async () => {
    const store = await stores.open();
    const other = await stores.open();
    const thread = newThread('original');
    const { saver, history } = await chat(store, thread);
    await store.prune(sessionOf(thread), { keepLast: 1 });
    const copy = newThread('forked');
    await store.fork(sessionOf(thread), { newId: sessionOf(copy) });
    await expectWhole(other, copy, TURNS, history);
    // Listed by thread alone, as the thread's own checkpoints are.
    const listed: string[] = [];
    for await (const tuple of new CkptSaver(other).list(configOf(copy))) {
      listed.push(tuple.checkpoint.id);
    }
    expect(listed).toEqual([...history.keys()].filter((id) => listed.includes(id)));
    expect(listed.length).toBeGreaterThan(0);

    const next = await chatTurn(new CkptSaver(other), copy, TURNS);
    expect(textsOf(next.messages)).toEqual(conversation(TURNS + 1));
    // The original thread is as it was.
    await expectWhole(other, thread, TURNS, history);
    await saver.deleteThread(thread);
    await saver.deleteThread(copy);
  });

  it('copies with copyStore into this store, readable there, safe to prune, and goes on', async () => {
    const source = new CheckpointStore(memory());
    const thread = newThread('copied');
    const { history } = await chat(source, thread);
    const target = await stores.open();
    const other = await stores.open();
    const counts = await copyStore(source, target);
    expect(counts.sessions).toBe(1);
    await expectWhole(target, thread, TURNS, history);

    // What each checkpoint needs came along, so a prune of the copy keeps it whole too.
    expect(await target.prune(sessionOf(thread), { keepLast: 1 })).toBeGreaterThan(0);
    await expectWhole(other, thread, TURNS, history);
    const saver = new CkptSaver(other);
    const next = await chatTurn(saver, thread, TURNS);
    expect(textsOf(next.messages)).toEqual(conversation(TURNS + 1));
    await saver.deleteThread(thread);
    await source.close();
  });
});

/** Sweep `store`; a store that cannot list its sessions refuses with UNSUPPORTED instead. */
async function sweepOrRefuse(
  store: CheckpointStore,
  options: Parameters<CheckpointStore['sweep']>[0],
): Promise<void> {
  if (store.capabilities.listSessions) {
    await store.sweep(options);
  } else {
    await expect(store.sweep(options)).rejects.toMatchObject({ code: 'UNSUPPORTED' });
  }
}
