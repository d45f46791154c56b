/**
 * The trees of the sessions the studio's pages look at. Reading a session's tree reads every
 * stored checkpoint's summary; the studio keeps those of the last few sessions read, with the
 * session's own summary, and reads them again only when that summary (head, checkpoint count,
 * last update) says the session changed, so that a page that comes back, or asks for the
 * time and metadata of the checkpoints it shows, costs the store one small read. A tree of a
 * store that keeps pins is read afresh each time, since a pin changes no summary; the times and
 * metadata a page asks for next still come from what that read kept.
 */
import type { CheckpointInfo, CheckpointStore, SessionInfo } from '@ckpt/core';
import { allCheckpoints, existingSession, type SessionTree, sessionTree } from '../reads.js';
import type { SessionRef } from '../session-ref.js';
import type { ForkIndex } from './fork-index.js';
import { sessionPrint } from './live.js';
import type { CheckpointDetail } from './topology.js';

/** How many sessions' checkpoints are kept. */
const KEPT_SESSIONS = 8;

/** A session's stored checkpoints, as read when its summary printed `print`. */
interface Kept {
  print: string;
  bySeq: Map<number, CheckpointInfo>;
  /** Whether the store reports pins, which can change while the summary stays. */
  pins: boolean;
}

export class SessionTrees {
  readonly #store: CheckpointStore;
  readonly #forks: ForkIndex;
  /** By session id; the last read last. */
  readonly #kept = new Map<string, Kept>();

  constructor(store: CheckpointStore, forks: ForkIndex) {
    this.#store = store;
    this.#forks = forks;
  }

  /** The session's tree (`ckpt tree --json`). */
  tree(ref: SessionRef): Promise<SessionTree> {
    return sessionTree(this.#store, ref, {
      forks: (id) => this.#forks.forksOf(id),
      checkpoints: async (info) => [...(await this.#checkpoints(info, true)).values()],
    });
  }

  /** The time and metadata of those of `seqs` that the session stores, seq ascending. */
  async details(ref: SessionRef, seqs: number[]): Promise<CheckpointDetail[]> {
    const bySeq = await this.#checkpoints(await existingSession(this.#store, ref), false);
    return [...new Set(seqs)]
      .sort((a, b) => a - b)
      .flatMap((seq) => {
        const cp = bySeq.get(seq);
        return cp === undefined ? [] : [{ seq, createdAt: cp.createdAt, metadata: cp.metadata }];
      });
  }

  /**
   * The session's stored checkpoints by seq: the ones kept while the session is unchanged, but
   * read afresh for `pinsMatter` where the store reports pins.
   */
  async #checkpoints(info: SessionInfo, pinsMatter: boolean): Promise<Map<number, CheckpointInfo>> {
    const print = sessionPrint(info);
    const kept = this.#kept.get(info.sessionId);
    if (kept?.print === print && !(pinsMatter && kept.pins)) return kept.bySeq;
    const checkpoints = await allCheckpoints(this.#store, info.sessionId);
    const bySeq = new Map(checkpoints.map((cp) => [cp.seq, cp]));
    this.#kept.delete(info.sessionId);
    this.#kept.set(info.sessionId, {
      print,
      bySeq,
      pins: checkpoints.some((cp) => 'pinned' in cp),
    });
    for (const id of this.#kept.keys()) {
      if (this.#kept.size <= KEPT_SESSIONS) break;
      this.#kept.delete(id);
    }
    return bySeq;
  }
}
