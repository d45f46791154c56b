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
