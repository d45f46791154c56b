/** The tables every SQL backend creates, by their names within the namespace. */
export const SQL_TABLES = [
  'meta',
  'sessions',
  'checkpoints',
  'bodies',
  'transcripts',
  'idempotency',
  'needs',
  'pins',
  'state',
  'kv',
  'changes',
  'tags',
] as const;

/** The name of one of the SQL tables. */
export type SqlTable = (typeof SQL_TABLES)[number];

/** Each table's full name: `prefix` + its name (`ckpt_` on SQLite and MySQL, `ckpt.` on PostgreSQL). */
export function sqlTables(prefix: string): Record<SqlTable, string> {
  return Object.fromEntries(SQL_TABLES.map((name) => [name, prefix + name])) as Record<
    SqlTable,
    string
  >;
}
