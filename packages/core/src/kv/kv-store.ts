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
   * at most `limit`. With it, `sessions()` and `state().keys()` work.
   */
  list?(prefix: string, options?: { after?: string; limit?: number }): Promise<string[]>;
  /** Optional: release resources. */
  close?(): Promise<void>;
  /**
   * Optional: what to do about a failure the store's driver raised, for the message of the
   * BACKEND error it becomes (as `CheckpointBackend.errorHint`); undefined for nothing to say.
   */
  errorHint?(err: unknown): string | undefined;
}
