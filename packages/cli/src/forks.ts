/** Which sessions were forked from a session's checkpoints, found in the catalog. */
import { allItems, type CheckpointStore, type SessionInfo } from '@ckpt/core';

/** Add `session` to `forks` (checkpoint seq → ids of the sessions forked from it) if it is a fork of `id`. */
export function noteFork(forks: Map<number, string[]>, id: string, session: SessionInfo): void {
  const from = session.forkedFrom;
  if (from?.sessionId !== id) return;
  forks.set(from.seq, [...(forks.get(from.seq) ?? []), session.sessionId]);
}

/**
 * The sessions forked from `id`, by the checkpoint they were forked at. The catalog holds
 * where each session was forked from, so one walk of its pages finds them.
 */
export async function forksOf(store: CheckpointStore, id: string): Promise<Map<number, string[]>> {
  const forks = new Map<number, string[]>();
  for await (const session of allItems((cursor) => store.sessions({ limit: 1000, cursor }))) {
    noteFork(forks, id, session);
  }
  return forks;
}
