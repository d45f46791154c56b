/**
 * Everything the API answers about one session (or a whole store), gathered in one value, so
 * that two stores (or one store before and after a round trip) compare with one `toEqual`.
 */
import type { CheckpointStore } from '@ckpt/core';
import { allPages } from './util.js';

/** Every read of `sessionId`: info, each stored checkpoint whole, history, list and transcript. */
export async function sessionReads(store: CheckpointStore, sessionId: string) {
  const info = await store.info(sessionId);
  const list = await allPages((page) => store.list(sessionId, page), 100);
  const checkpoints = [];
  for (const { seq } of list) checkpoints.push(await store.load(sessionId, seq));
  return {
    info,
    head: await store.load(sessionId),
    history: await store.history(sessionId),
    list,
    checkpoints,
    transcript: await allPages((page) => store.transcript(sessionId, page), 100),
  };
}

/** Every state scope of `store`, in order, with each of its keys and values. */
export async function stateReads(store: CheckpointStore) {
  const scopes = await allPages((page) => store.stateScopes(page), 100);
  const out: [string, [string, unknown][]][] = [];
  for (const scope of scopes) {
    const state = store.state(scope);
    const entries: [string, unknown][] = [];
    for (const key of await allPages((page) => state.keys(page), 100)) {
      entries.push([key, await state.get(key)]);
    }
    out.push([scope, entries]);
  }
  return out;
}

/** Everything a whole store answers: its sessions in order, each session's reads, its state. */
export async function storeReads(store: CheckpointStore) {
  const sessions = await allPages((page) => store.sessions(page), 100);
  const reads = [];
  for (const { sessionId } of sessions) reads.push(await sessionReads(store, sessionId));
  return { sessions, reads, state: await stateReads(store) };
}
