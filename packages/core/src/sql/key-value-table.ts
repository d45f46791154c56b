/**
 * A table of values by key: both the state table (keyed by scope and key) and the KV table
 * (keyed by key) of every SQL backend. The backend's state methods and the adapter's `KvStore`
 * run on this one implementation, so an adapter writes the six statements once, for a table of
 * either shape. Values are text, or bytes where the value column holds bytes (stored-bytes.ts).
 */

import { prefixUpperBound } from '../adapter/order.js';
import { storedBytesOf, textFromStoredBytes } from '../adapter/stored-bytes.js';
import type { KvStore } from '../kv/kv-store.js';
import type { StoredValue } from './rows.js';
import type { RunStatement } from './run.js';

/**
 * A key-value table's statements. `…key` is the values of its key columns in order (scope and
 * key for the state table, the key alone for the KV table), then the values listed.
 */
export interface KeyValueStatements<S> {
  /** …key; one row: `value`, or none */
  get: S;
  /** …key, value: written whether the key is there or not */
  set: S;
  /** …key */
  delete: S;
  /** …key, value: written only where the key is absent */
  insert: S;
  /**
   * …key, expected, expected as text, value: written only where the value is `expected`, held
   * in either form (see `KeyValueSql.textHeld`)
   */
  replace: S;
  /**
   * The key columns but the last (the scope, or none), then prefix, upperBound (null: none),
   * after (null: none), limit; rows: the key as `k`, ascending by UTF-8 bytes
   */
  keys: S;
}

/** Each of the six statements made ready by `prepare` (prepared, rewritten). */
export function prepareKeyValue<S>(
  statements: KeyValueStatements<string>,
  prepare: (text: string) => S,
): KeyValueStatements<S> {
  return {
    get: prepare(statements.get),
    set: prepare(statements.set),
    delete: prepare(statements.delete),
    insert: prepare(statements.insert),
    replace: prepare(statements.replace),
    keys: prepare(statements.keys),
  };
}

/** What a value column holds: text, or bytes (stored-bytes.ts). */
export type ValueColumn = 'text' | 'bytes';

/** The operations of a key-value table; `at` is the values of its key columns. */
export class KeyValueTable<S> {
  readonly #sql: KeyValueStatements<S>;
  readonly #run: RunStatement<S>;
  readonly #stored: (value: string) => StoredValue;

  /** `holds`: what the value column holds; a column of text is the default. */
  constructor(
    statements: KeyValueStatements<S>,
    run: RunStatement<S>,
    holds: ValueColumn = 'text',
  ) {
    this.#sql = statements;
    this.#run = run;
    this.#stored = holds === 'bytes' ? storedBytesOf : (value) => value;
  }

  async get(at: readonly unknown[]): Promise<string | undefined> {
    const { rows } = await this.#run<{ value: StoredValue }>(this.#sql.get, [...at]);
    const value = rows[0]?.value;
    return value === undefined ? undefined : textFromStoredBytes(value);
  }

  async set(at: readonly unknown[], value: string): Promise<void> {
    await this.#run(this.#sql.set, [...at, this.#stored(value)]);
  }

  async delete(at: readonly unknown[]): Promise<boolean> {
    return (await this.#run(this.#sql.delete, [...at])).changed > 0;
  }

  /**
   * Write `value` only where the value is `expected` (null: the key is absent); true when
   * written. Compares values, not forms: a column of bytes may hold `expected` as the text an
   * older version wrote too, so the statement is given both.
   */
  async compareAndSet(at: readonly unknown[], expected: string | null, value: string) {
    const result =
      expected === null
        ? await this.#run(this.#sql.insert, [...at, this.#stored(value)])
        : await this.#run(this.#sql.replace, [
            ...at,
            this.#stored(expected),
            expected,
            this.#stored(value),
          ]);
    return result.changed === 1;
  }

  /** Keys under `scope` starting with `prefix`, after `after` (null: from the first), ascending, at most `limit`. */
  async keys(
    scope: readonly unknown[],
    query: { prefix: string; after: string | null; limit: number },
  ): Promise<string[]> {
    const { prefix, after, limit } = query;
    const { rows } = await this.#run<{ k: string }>(this.#sql.keys, [
      ...scope,
      prefix,
      prefixUpperBound(prefix),
      after,
      limit,
    ]);
    return rows.map((row) => row.k);
  }
}

/** A `KvStore` on a key-value table keyed by the key alone, with the adapter's `close` and `errorHint`. */
export function keyValueStore<S>(
  table: KeyValueTable<S>,
  own: Required<Pick<KvStore, 'close'>> & Pick<KvStore, 'errorHint'>,
): KvStore {
  return {
    get: (key) => table.get([key]),
    set: (key, value) => table.set([key], value),
    delete: (key) => table.delete([key]),
    compareAndSet: (key, expected, value) => table.compareAndSet([key], expected, value),
    list: (prefix, { after, limit } = {}) =>
      table.keys([], { prefix, after: after ?? null, limit: limit ?? Number.MAX_SAFE_INTEGER }),
    close: own.close,
    ...(own.errorHint && { errorHint: own.errorHint }),
  };
}

/** How a SQL dialect writes what the key-value statements need. */
export interface KeyValueSql {
  /** The table's name, as the statements write it. */
  table: string;
  /** The key columns: the scope columns (none, or `scope`), then the listed key. */
  keys: readonly string[];
  /**
   * How an insert meets a row with the same key: `ON CONFLICT` (SQLite, PostgreSQL) or
   * `ON DUPLICATE KEY` (MySQL).
   */
  onConflict: 'ON CONFLICT' | 'ON DUPLICATE KEY';
  /** Parameter `n` where the SQL tests it for null (`$3`, or `$3::text` where its type must be named). */
  nullable?: (n: number) => string;
  /**
   * What `get` reads for the value column, named as `column` (the column itself by default): an
   * expression that makes text of bytes on the server, where that is cheaper to send.
   */
  readValue?: (column: string) => string;
  /**
   * Parameter `n`, a value's text, as the value column holds it where a version from before the
   * column held bytes wrote it (`$n` by default: the text itself, or the UTF-8 bytes a driver
   * sends for it). A compare-and-set matches it as well as the bytes a write stores now, since
   * a process of that version may still be writing beside this one after the upgrade.
   */
  textHeld?: (n: number) => string;
}

/** The six statements of a key-value table, with `$n` parameters. */
export function keyValueSql(spec: KeyValueSql): KeyValueStatements<string> {
  const { table, keys } = spec;
  const nullable = spec.nullable ?? ((n: number) => `$${n}`);
  const read = spec.readValue ?? ((column: string) => column);
  const textHeld = spec.textHeld ?? ((n: number) => `$${n}`);
  const n = keys.length;
  const columns = [...keys, 'value'].join(', ');
  const values = [...keys, 'value'].map((_, i) => `$${i + 1}`).join(', ');
  const at = keys.map((column, i) => `${column} = $${i + 1}`).join(' AND ');
  const listed = keys[n - 1]!;
  const scope = keys.slice(0, -1).map((column, i) => `${column} = $${i + 1} AND `);
  const [prefix, bound, after, limit] = [n, n + 1, n + 2, n + 3];
  const duplicateKey = spec.onConflict === 'ON DUPLICATE KEY';
  return {
    get: `SELECT ${read('value')} AS value FROM ${table} WHERE ${at}`,
    set: duplicateKey
      ? `INSERT INTO ${table} (${columns}) VALUES (${values}) ON DUPLICATE KEY UPDATE value = VALUES(value)`
      : `INSERT INTO ${table} (${columns}) VALUES (${values}) ON CONFLICT (${keys.join(', ')}) DO UPDATE SET value = excluded.value`,
    delete: `DELETE FROM ${table} WHERE ${at}`,
    insert: duplicateKey
      ? `INSERT IGNORE INTO ${table} (${columns}) VALUES (${values})`
      : `INSERT INTO ${table} (${columns}) VALUES (${values}) ON CONFLICT DO NOTHING`,
    replace: `UPDATE ${table} SET value = $${n + 3} WHERE ${at} AND value IN ($${n + 1}, ${textHeld(n + 2)})`,
    keys: `
      SELECT ${listed} AS k FROM ${table}
       WHERE ${scope.join('')}${listed} >= $${prefix}
         AND (${nullable(bound)} IS NULL OR ${listed} < $${bound})
         AND (${nullable(after)} IS NULL OR ${listed} > $${after})
       ORDER BY ${listed} LIMIT $${limit}`,
  };
}
