/**
 * How statements go to a pool: each once the namespace is migrated, prepared once per
 * connection (or as text), and refused before it is sent when it would not fit a packet.
 */
import { CkptError } from '@ckpt/core';
import { errorCode } from '@ckpt/core/adapter';
import { type Positional, positional, positionalValues, type SqlResult } from '@ckpt/core/sql';
import type { ExecuteValues, Pool, PoolConnection, QueryOptions } from 'mysql2/promise';

/** A statement as MySQL takes it: `?` placeholders, and whether it is a CALL. */
export interface MysqlStatement extends Positional {
  /** A CALL, whose rows are its first result set. */
  call: boolean;
}

/** `text`, written with `$n` parameters, as a statement MySQL takes. */
export function statement(text: string): MysqlStatement {
  const { sql, order } = positional(text);
  return { sql, order, call: /^\s*CALL\b/.test(sql) };
}

/**
 * Query options that read rows as objects of typed columns, whatever the options of a pool
 * the caller gave (`rowsAsArray`, `typeCast: false`, `nestTables` would change them).
 */
export const PLAIN_ROWS = { rowsAsArray: false, typeCast: true, nestTables: false } as const;

/**
 * Whether `pool`'s connections read rows as PLAIN_ROWS says already, so that its statements
 * need no options: mysql2 takes longer for a call given as an options object than for
 * `(sql, values)`.
 */
function readsPlainRows(pool: Pool): boolean {
  const config = (
    (pool as Partial<Pool>).pool?.config as
      | { connectionConfig?: { rowsAsArray?: boolean; typeCast?: unknown; nestTables?: unknown } }
      | undefined
  )?.connectionConfig;
  return (
    config !== undefined &&
    !config.rowsAsArray &&
    config.typeCast === true &&
    (config.nestTables === undefined || config.nestTables === false)
  );
}

// Errors after which nothing of the call is left, so running it again is safe: the server
// rolled back the whole transaction (a procedure's handler rolls back on a lock wait timeout
// too), or the procedure was missing, for the instant in which an upgrade in another process
// replaces it with DROP and CREATE (MySQL has no CREATE OR REPLACE PROCEDURE).
const NOTHING_LEFT = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT', 'ER_SP_DOES_NOT_EXIST']);

/** Whether nothing is left of the statement that failed with `err`: core runs it again. */
export const nothingLeft = (err: unknown): boolean => NOTHING_LEFT.has(errorCode(err));

/** Whether `err` refused a statement before it was sent: one too large for a packet. */
export const refusedUnsent = (err: unknown): boolean =>
  err instanceof CkptError && err.code === 'PAYLOAD_TOO_LARGE';

/**
 * Runs statements on `pool`, each once `packetBytes` (the migration, which resolves to the
 * server's max_allowed_packet) has resolved. With `prepare`, every statement is prepared once
 * per connection and then sent in the binary protocol, which carries values as they are: the
 * text protocol escapes them into the SQL (JSON is full of quotes), and the server then parses
 * the whole literal, which for a large checkpoint takes longer than the rest of the call. The
 * server also skips parsing a prepared statement on every run.
 */
export function statementRunner(
  pool: Pool,
  prepare: boolean,
  packetBytes: Promise<number>,
): MysqlRunStatement {
  const method = prepare ? 'execute' : 'query';
  const plain = readsPlainRows(pool);
  return async <Row>(statement: MysqlStatement, values: unknown[], on: Queryable = pool) => {
    const ordered = positionalValues(statement.order, values);
    checkPacket(statement.sql, ordered, await packetBytes, !prepare);
    const result = await send(on, method, statement.sql, ordered, plain);
    if (!Array.isArray(result)) {
      return { rows: [], changed: (result as { affectedRows: number }).affectedRows };
    }
    // A CALL gives its result sets, then a header: the rows are those of every set (one set a
    // call of a batch; one in all for the other procedures).
    const rows = (
      statement.call ? result.filter((set) => Array.isArray(set)).flat() : result
    ) as Record<string, unknown>[];
    return { rows: idsAsText(rows) as Row[], changed: 0 };
  };
}

/** Where a statement runs: the pool (any free connection), or a connection taken from it. */
export type Queryable = Pool | PoolConnection;

/** Runs a statement (see statementRunner), on the pool or on a connection leased from it. */
export type MysqlRunStatement = <Row = Record<string, unknown>>(
  statement: MysqlStatement,
  values: unknown[],
  on?: Queryable,
) => Promise<SqlResult<Row>>;

/**
 * The columns that read values (checkpoint data, transcript items, a state value): bytes, which
 * the SQL family reads back as the text core wrote (textFromStoredBytes), not as UTF-8.
 */
const VALUE_COLUMNS = new Set(['data', 'transcript', 'value']);

/**
 * Ids and state keys come back from VARBINARY columns as bytes; the backend contract wants text.
 * Values stay bytes (see VALUE_COLUMNS).
 */
function idsAsText(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  for (const row of rows) {
    for (const column in row) {
      const value = row[column];
      if (Buffer.isBuffer(value) && !VALUE_COLUMNS.has(column))
        row[column] = value.toString('utf8');
    }
  }
  return rows;
}

// Room in a packet for what is not a value: the statement's text and the protocol's framing.
const PACKET_SLACK = 64 * 1024;

// What the text protocol escapes, each into two characters (mysql2's escaping of a string).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are escaped.
const ESCAPED = /[\0\b\t\n\r\x1a"'\\]/g;

/**
 * The bytes `values` take in a statement: as they are (prepared), or `escaped` into the SQL as
 * literals (the text protocol), text escaped and bytes as hex (`X'…'`, two characters a byte).
 */
function valueBytes(values: readonly unknown[], escaped: boolean): number {
  let bytes = 0;
  for (const value of values) {
    if (Buffer.isBuffer(value)) bytes += (escaped ? 2 : 1) * value.length;
    if (typeof value !== 'string') continue;
    bytes += Buffer.byteLength(value);
    if (escaped) bytes += value.match(ESCAPED)?.length ?? 0;
  }
  return bytes;
}

/**
 * Refuse, before anything is sent, a statement larger than the server's max_allowed_packet,
 * which would make the server drop the connection mid-write. `escaped`: values go into the
 * SQL as literals (see valueBytes).
 */
function checkPacket(sql: string, values: unknown[], packetBytes: number, escaped: boolean): void {
  let units = sql.length;
  let bytes = 0;
  for (const value of values) {
    if (typeof value === 'string') units += value.length;
    else if (Buffer.isBuffer(value)) bytes += (escaped ? 2 : 1) * value.length;
  }
  // UTF-8 takes at most 3 bytes per UTF-16 unit, and escaping at most doubles those: most
  // statements need no exact count.
  if (bytes + units * (escaped ? 6 : 3) + PACKET_SLACK <= packetBytes) return;
  bytes = Buffer.byteLength(sql) + valueBytes(values, escaped);
  if (bytes + PACKET_SLACK > packetBytes) {
    throw new CkptError(
      'PAYLOAD_TOO_LARGE',
      `this call sends ${bytes} bytes, more than the MySQL server's max_allowed_packet of ${packetBytes} bytes can carry; raise max_allowed_packet on the server, or lower the store's maxPayloadBytes to fit it. Nothing was written.`,
      { details: { bytes, maxAllowedPacket: packetBytes } },
    );
  }
}

/**
 * Run a statement, prepared (`execute`) or as text (`query`), through the callback interface
 * of the pool underneath a promise pool. The promise interface captures a stack trace for
 * every call (mysql2's `trace` option, on by default), which costs more CPU than the rest of a
 * short query; the store wraps a failure in an error of its own, raised where the caller
 * awaits it, anyway. With `plain` (see readsPlainRows), the call carries no row options.
 */
function send(
  on: Queryable,
  method: 'execute' | 'query',
  sql: string,
  values: unknown[],
  plain: boolean,
): Promise<unknown> {
  const options: QueryOptions = { sql, values, ...PLAIN_ROWS };
  // The callback pool underneath a promise pool, or the connection underneath a leased one.
  const core = ((on as Partial<Pool>).pool ??
    (on as Partial<PoolConnection>).connection) as Partial<Pool>['pool'];
  if (typeof core?.[method] !== 'function') {
    const sent = method === 'execute' ? on.execute(options) : on.query(options);
    return sent.then(([result]) => result);
  }
  return new Promise((resolve, reject) => {
    const done = (err: unknown, result: unknown) => (err ? reject(err) : resolve(result));
    if (!plain) core[method](options, done);
    else if (method === 'execute') core.execute(sql, values as ExecuteValues, done);
    else core.query(sql, values, done);
  });
}
