/** Statement sets in MySQL's form, and the key-value table statements for the state and KV tables. */
import { type KeyValueStatements, keyValueSql } from '@ckpt/core/sql';
import { type MysqlStatement, statement } from './statement-runner.js';

/** Each statement of a set (written with `$n` parameters) as MySQL takes it. */
export function statements<K extends string>(texts: Record<K, string>): Record<K, MysqlStatement> {
  const names = Object.keys(texts) as K[];
  return Object.fromEntries(names.map((name) => [name, statement(texts[name])])) as Record<
    K,
    MysqlStatement
  >;
}

/** The statements of a key-value table (`keys`: its key columns), the state or the KV table. */
export function keyValueStatements(
  table: string,
  keys: readonly string[],
): KeyValueStatements<MysqlStatement> {
  return statements(keyValueSql({ table, keys, onConflict: 'ON DUPLICATE KEY' }));
}
