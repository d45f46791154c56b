/**
 * Which sessions were forked from which, kept up to date cheaply for a studio that stays open.
 * The catalog is walked whole once (started when the studio starts); after that only its
 * newest pages are read, down to the sessions updated before the last walk began, since a new
 * fork is a session updated since then. A session found there is checked to still be a fork
 * of the session asked about before it is named, so that a deleted fork drops out.
 */
import { type CheckpointStore, isCkptError, type SessionInfo } from '@ckpt/core';
import { noteFork } from '../forks.js';

/** How long a walk is trusted before the next question reads the newest pages again. */
const FRESH_MS = 1000;
/** How far before the last walk's start the next one reads, for clocks that disagree a little. */
const SLACK_MS = 5000;

/** The forks of every session of one store, by the session they were forked from. */
export class ForkIndex {
  readonly #store: CheckpointStore;
  /** Source session → fork id → the seq it was forked at. */
  readonly #bySource = new Map<string, Map<string, number>>();
  #walkedFrom: number | null = null;
  #walkedAt = 0;
  #walking: Promise<void> | null = null;

  constructor(store: CheckpointStore) {
    this.#store = store;
  }

  /** Start the first walk now, so that it is done by the time a tree asks. */
  warm(): void {
    this.#refresh().catch(() => {});
  }

  /** The sessions forked from `id`, by the checkpoint they were forked at. */
  async forksOf(id: string): Promise<Map<number, string[]>> {
    await this.#refresh();
    const forks = new Map<number, string[]>();
    const candidates = [...(this.#bySource.get(id)?.keys() ?? [])];
    const infos = await Promise.all(candidates.map((fork) => this.#store.info(fork)));
    for (const info of infos) if (info !== null) noteFork(forks, id, info);
    return forks;
  }

  #note(session: SessionInfo): void {
    const from = session.forkedFrom;
    if (from === null) return;
    let forks = this.#bySource.get(from.sessionId);
    if (forks === undefined) {
      forks = new Map();
      this.#bySource.set(from.sessionId, forks);
    }
    forks.set(session.sessionId, from.seq);
  }

  #refresh(): Promise<void> {
    if (this.#walking !== null) return this.#walking;
    if (Date.now() - this.#walkedAt < FRESH_MS) return Promise.resolve();
    const started = Date.now();
    const since = this.#walkedFrom === null ? null : this.#walkedFrom - SLACK_MS;
    this.#walking = this.#walk(since)
      .then(() => {
        this.#walkedFrom = started;
        this.#walkedAt = Date.now();
      })
      .catch((err: unknown) => {
        // A store that cannot list its sessions has no forks to show; anything else is raised.
        if (!isCkptError(err, 'UNSUPPORTED')) throw err;
      })
      .finally(() => {
        this.#walking = null;
      });
    return this.#walking;
  }

  /** Read the catalog from the newest session down to those last updated before `since` (all of it for null). */
  async #walk(since: number | null): Promise<void> {
    for (let cursor: string | null = null; ; ) {
      const page = await this.#store.sessions({ limit: 1000, cursor });
      for (const session of page.items) {
        if (since !== null && session.updatedAt.getTime() < since) return;
        this.#note(session);
      }
      if (page.cursor === null) return;
      cursor = page.cursor;
    }
  }
}
