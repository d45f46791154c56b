/** The small KV contract a third-party backend can implement instead of the native one. */
export interface KvStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  /** False when the key was absent. */
  delete(key: string): Promise<boolean>;
  /**
   * Optional: write `value` only if the current value is `expected` (null: only if absent);
   * true when written. With it, `kvBackend` meets every guarantee under concurrent writers.
   */
  compareAndSet?(key: string, expected: string | null, value: string): Promise<boolean>;
  /**
   * Optional, with `setIfVersion`: the value and the version the store keeps beside it (a
   * revision, an etag, a counter: anything the store compares), or undefined when absent. For
   * stores that compare versions rather than values (NATS, etcd, Consul, DynamoDB): with this
   * pair, `kvBackend` reads once and then writes conditionally on what it read, instead of
   * reading again before every compare-and-set.
   */
  getWithVersion?(key: string): Promise<{ value: string; version: unknown } | undefined>;
  /**
   * Optional, with `getWithVersion`: write `value` only if the key's version is still `version`
   * (as `getWithVersion` answered it; null: only if the key is absent); true when written.
   * Either this pair or `compareAndSet` makes `kvBackend` safe under concurrent writers.
   */
  setIfVersion?(key: string, value: string, version: unknown): Promise<boolean>;
  /**
   * Optional: keys starting with `prefix`, ascending by UTF-8 bytes, strictly after `after`,
   * at most `limit`. With it, `sessions()` (with `where` too, through the tag index) and
   * `state().keys()` work.
   */
  list?(prefix: string, options?: { after?: string; limit?: number }): Promise<string[]>;
  /**
   * Optional: the store's own log of its writes, in the order they committed (as etcd's
   * revisions, NATS KV's sequences or DynamoDB's streams keep it): the writes after position
   * `after`, at most `limit`, each with the value written (null for a delete). With it,
   * `watch()` works. It must be the store's own record of each write, made with the write
   * (in its transaction, or by the store itself), never a second call after it, which a crash
   * could lose: a write missing from the log is a change a watcher misses without a word.
   *
   * Positions are strings that sort (as strings) in the order of the log, and mean the same in
   * every process. With `after` null: no writes, and the position of the log's end now.
   * 'expired' when the log no longer holds what followed `after`; 'unknown' when `after` is not
   * a position this log made (malformed, or beyond its end). `limit` 0 only checks `after`.
   */
  changes?(query: {
    after: string | null;
    limit: number;
  }): Promise<KvChangesPage | 'expired' | 'unknown'>;
  /**
   * Optional, with `changes`: call `wake` soon after a write commits, from any process, so that
   * watchers read at once rather than at their next poll. Resolves, once listening, to what
   * stops it.
   */
  onChanges?(wake: () => void): Promise<() => Promise<void>>;
  /**
   * Optional, with `changes`: how often, in milliseconds, watchers read the log when nothing
   * woke them (default 100 without `onChanges`, 2,000 with it).
   */
  readonly changesPollMs?: number;
  /** Optional: release resources. */
  close?(): Promise<void>;
  /**
   * Optional: what to do about a failure the store's driver raised, for the message of the
   * BACKEND error it becomes (as `CheckpointBackend.errorHint`); undefined for nothing to say.
   */
  errorHint?(err: unknown): string | undefined;
}

/** One write, as a store's log of its writes (`KvStore.changes`) holds it. */
export interface KvChange {
  key: string;
  /** The value written; null when the key was deleted. */
  value: string | null;
  /** Where the write is in the log. */
  position: string;
}

/** A page of a store's log of its writes, and where to read on from. */
export interface KvChangesPage {
  changes: KvChange[];
  /** The position after this page: the last write's, or further where the log knows more. */
  position: string;
}
