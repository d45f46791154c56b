/**
 * Values in a hash, with a sorted set of their keys beside it (all scores 0, so Redis orders
 * them by their bytes, which for UTF-8 is code point order). State scopes and the KV store are
 * both this. Writes change both keys in one script; prefix listings are one ZRANGEBYLEX.
 */

import { storedBytesOrText, textFromStoredBytes } from '@ckpt/core/adapter';
import { explained, type RedisClient } from './runner.js';
import { type CatalogEntry, type ChangesKeys, type IndexedHashKeys, logKeys } from './schema.js';
import { indexedCompareAndSet, indexedDelete, indexedSet } from './statements.js';

// No valid UTF-8 text holds the byte 0xff, so `prefix` + 0xff is above every key that starts
// with `prefix` and below every other key above `prefix`.
const ABOVE_ALL_TEXT = Buffer.from([0xff]);

/**
 * What the hash's values are: the text given (the KV store's), or values core encoded, held as
 * bytes (state scopes': see storedBytesOf), which may also be the text that layout version 1
 * wrote (see migrate.ts).
 */
export type HashValues = 'text' | 'bytes';

/**
 * The keys of a hash listed in a catalog while it holds a key (a state scope), whose every
 * change is recorded in its shard's change log; the KV store's hash has neither.
 */
export type ListedHashKeys = IndexedHashKeys & { catalog: CatalogEntry; changes: ChangesKeys };

export class IndexedHash {
  readonly #keys: readonly string[];
  /** The catalog member that lists this hash while it holds a key, as the scripts' last value. */
  readonly #listed: readonly string[];
  readonly #bytes: boolean;

  constructor(
    readonly client: RedisClient,
    keys: IndexedHashKeys | ListedHashKeys,
    values: HashValues,
  ) {
    this.#keys =
      'catalog' in keys
        ? [keys.values, keys.index, keys.catalog.key, ...logKeys(keys.changes)]
        : [keys.values, keys.index];
    this.#listed = 'catalog' in keys ? [keys.catalog.member] : [];
    this.#bytes = values === 'bytes';
  }

  async get(key: string): Promise<string | undefined> {
    if (!this.#bytes) {
      return (await explained(this.client, this.client.hget(this.#keys[0]!, key))) ?? undefined;
    }
    const held = await explained(this.client, this.client.hgetBuffer(this.#keys[0]!, key));
    return held === null ? undefined : textFromStoredBytes(held);
  }

  async set(key: string, value: string): Promise<void> {
    await indexedSet.run(this.client, this.#keys, [key, this.#stored(value), ...this.#listed]);
  }

  #stored(value: string): Buffer | string {
    return this.#bytes ? storedBytesOrText(value) : value;
  }

  async delete(key: string): Promise<boolean> {
    return (await indexedDelete.count(this.client, this.#keys, [key, ...this.#listed])) === 1;
  }

  async compareAndSet(key: string, expected: string | null, value: string): Promise<boolean> {
    const args =
      expected === null
        ? [key, '0', '', '', this.#stored(value)]
        : [key, '1', this.#stored(expected), expected, this.#stored(value)];
    return (
      (await indexedCompareAndSet.count(this.client, this.#keys, [...args, ...this.#listed])) === 1
    );
  }

  /** Keys starting with `prefix`, after `after` (null: from the first), ascending, at most `limit`. */
  async keys(prefix: string, after: string | null, limit: number): Promise<string[]> {
    const from = Buffer.from(prefix, 'utf8');
    const past = after === null ? null : Buffer.from(after, 'utf8');
    const min =
      past !== null && Buffer.compare(past, from) >= 0
        ? Buffer.concat([Buffer.from('('), past])
        : Buffer.concat([Buffer.from('['), from]);
    const max = prefix === '' ? '+' : Buffer.concat([Buffer.from('('), from, ABOVE_ALL_TEXT]);
    return explained(
      this.client,
      this.client.zrangebylex(this.#keys[1]!, min, max, 'LIMIT', 0, limit),
    );
  }
}
