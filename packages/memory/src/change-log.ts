/**
 * The memory backend's change log: the latest changes, numbered, and the watchers to wake at
 * each. It lives in the process, as the data does, so a change is known the moment it is made.
 */
import {
  type ChangeKind,
  type ChangesPage,
  logPosition,
  notThisLog,
  readLogPosition,
  type StoredChange,
} from '@ckpt/core/adapter';

/** The changes kept at least; a watcher further behind must reload (EXPIRED). */
export const KEPT_CHANGES = 10_000;
/** Dropped at once, past what is kept: one copy of the array for many changes. */
const DROPPED_AT_ONCE = 1_000;

export class MemoryChangeLog {
  /** The changes kept, oldest first; the first is numbered `#first`. */
  #changes: StoredChange[] = [];
  #first = 1;
  readonly #wakes = new Set<() => void>();

  /** Record a change, and wake every watcher. */
  record(sessionId: string, kind: ChangeKind, seq: number | null): void {
    const number = this.#first + this.#changes.length;
    this.#changes.push({ position: logPosition(number), sessionId, kind, seq });
    if (this.#changes.length > KEPT_CHANGES + DROPPED_AT_ONCE) {
      this.#changes.splice(0, DROPPED_AT_ONCE);
      this.#first += DROPPED_AT_ONCE;
    }
    for (const wake of this.#wakes) queueMicrotask(wake);
  }

  changes(query: { after: string | null; limit: number }): ChangesPage | 'expired' {
    const end = this.#first + this.#changes.length - 1;
    if (query.after === null) return { changes: [], position: logPosition(end) };
    const [after] = readLogPosition(query.after);
    const from = Number(after!);
    if (from > end) throw notThisLog(query.after);
    if (from < this.#first - 1) return 'expired';
    const changes = this.#changes.slice(
      from - this.#first + 1,
      from - this.#first + 1 + query.limit,
    );
    const position = changes.length > 0 ? changes[changes.length - 1]!.position : query.after;
    return { changes, position };
  }

  listen(wake: () => void): () => Promise<void> {
    this.#wakes.add(wake);
    return async () => {
      this.#wakes.delete(wake);
    };
  }
}
