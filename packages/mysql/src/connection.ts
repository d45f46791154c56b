/** The pool a store runs on, and the schema migration that runs once when a store opens. */
import {
  CkptError,
  DEFAULT_MAX_PAYLOAD_BYTES,
  invalidArgument,
  migrationStart,
  openConnection,
  retryRolledBack,
} from '@ckpt/core';
import mysql, { type ExecuteValues, type Pool, type QueryOptions } from 'mysql2/promise';
import { migrations, tables } from './schema.js';

/** Options of `mysql()` and `mysqlKv()`: a connection string or an existing mysql2 pool. */
export type MysqlOptions = ({ url: string } | { pool: Pool | { promise(): Pool } }) & {
  /** Prefix of every table name; default `ckpt`. */
  namespace?: string;
  /**
   * Prepare statements once per connection and send values in the binary protocol (default
   * true). False sends every statement as text: for a proxy that pins a client to one server
   * connection once it prepares a statement, such as RDS Proxy.
   */
  preparedStatements?: boolean;
};

/** A pool, whether it is ours to close, the namespace, and whether to prepare statements. */
export interface Connection {
  pool: Pool;
  owned: boolean;
  namespace: string;
  preparedStatements: boolean;
}

/**
 * Query options that read rows as objects of typed columns, whatever the options of a pool
 * the caller gave (`rowsAsArray`, `typeCast: false`, `nestTables` would change them).
 */
const PLAIN_ROWS = { rowsAsArray: false, typeCast: true, nestTables: false } as const;

/**
 * Whether `pool`'s connections read rows as PLAIN_ROWS says already, so that its statements
 * need no options: mysql2 takes a few microseconds more for a call given as an options
 * object than for `(sql, values)` (measured: 62 against 56 µs for a load's SELECT).
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

/** Statements on a pool, each run once the namespace is migrated. */
export interface Statements {
  /** Resolves once the namespace is migrated; rejects (SCHEMA, UNSUPPORTED, …) when it cannot be. */
  ready: Promise<void>;
  /** Run one statement, again while it fails leaving nothing behind; its result (rows, or a header). */
  run(sql: string, values: unknown[]): Promise<unknown>;
}

/**
 * Migrate namespace `ns` on `pool` (once), and run statements there. With `prepare`, every
 * statement is prepared once per connection and then sent in the binary protocol, which
 * carries values as they are: the text protocol escapes them into the SQL (JSON is full of
 * quotes), and the server then parses the whole literal, which for a 64 KiB checkpoint took
 * longer than the rest of the call. The server also skips parsing a prepared statement on
 * every run.
 */
export function openStatements(pool: Pool, ns: string, prepare: boolean): Statements {
  const packetBytes = migrate(pool, ns);
  const ready = packetBytes.then(() => undefined);
  // Reported by the first call that awaits it, not as an unhandled rejection.
  ready.catch(() => {});
  const method = prepare ? 'execute' : 'query';
  const plain = readsPlainRows(pool);
  return {
    ready,
    async run(sql, values) {
      checkPacket(sql, values, await packetBytes, !prepare);
      return retryRolledBack(() => send(pool, method, sql, values, plain), NOTHING_LEFT);
    },
  };
}

// Room in a packet for what is not a value: the statement's text and the protocol's framing.
const PACKET_SLACK = 64 * 1024;

// What the text protocol escapes, each into two characters (mysql2's escaping of a string).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are escaped.
const ESCAPED = /[\0\b\t\n\r\x1a"'\\]/g;

/**
 * Refuse, before anything is sent, a statement larger than the server's max_allowed_packet,
 * which would make the server drop the connection mid-write. `escaped`: values go into the
 * SQL as escaped literals (the text protocol).
 */
function checkPacket(sql: string, values: unknown[], packetBytes: number, escaped: boolean): void {
  let units = sql.length;
  for (const value of values) if (typeof value === 'string') units += value.length;
  // UTF-8 takes at most 3 bytes per UTF-16 unit, and escaping at most doubles those: most
  // statements need no exact count.
  if (units * (escaped ? 6 : 3) + PACKET_SLACK <= packetBytes) return;
  let bytes = Buffer.byteLength(sql);
  for (const value of values) {
    if (typeof value !== 'string') continue;
    bytes += Buffer.byteLength(value);
    if (escaped) bytes += value.match(ESCAPED)?.length ?? 0;
  }
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
  pool: Pool,
  method: 'execute' | 'query',
  sql: string,
  values: unknown[],
  plain: boolean,
): Promise<unknown> {
  const options: QueryOptions = { sql, values, ...PLAIN_ROWS };
  const core = (pool as Partial<Pool>).pool;
  if (typeof core?.[method] !== 'function') {
    const sent = method === 'execute' ? pool.execute(options) : pool.query(options);
    return sent.then(([result]) => result);
  }
  return new Promise((resolve, reject) => {
    const done = (err: unknown, result: unknown) => (err ? reject(err) : resolve(result));
    if (!plain) core[method](options, done);
    else if (method === 'execute') core.execute(sql, values as ExecuteValues, done);
    else core.query(sql, values, done);
  });
}

// A packet must hold a checkpoint at the default limit plus the statement around it.
const PACKET_NEEDED = DEFAULT_MAX_PAYLOAD_BYTES + 1024 * 1024;

/** Open (or adopt) the pool named by `options`. */
export function connect(options: MysqlOptions): Connection {
  const { handle, owned, namespace, switches } = openConnection<Pool>(options, {
    factory: 'mysql',
    handle: 'pool',
    handleKind: "a mysql2 pool (from 'mysql2/promise' or 'mysql2')",
    methods: ['query', 'execute', 'getConnection'],
    example: 'mysql://user@host:3306/db',
    switches: ['preparedStatements'],
    // A callback-style pool (from 'mysql2') is used through its promise wrapper.
    adopt: (given) => {
      const promise = (given as { promise?: unknown }).promise;
      return typeof promise === 'function' ? promise.call(given) : given;
    },
    open: (url) => mysql.createPool({ uri: url, charset: 'utf8mb4', connectionLimit: 10 }),
  });
  return { pool: handle, owned, namespace, preparedStatements: switches.preparedStatements! };
}

/**
 * Bring the namespace's tables to SCHEMA_VERSION under GET_LOCK, so that processes starting
 * at once migrate it once; and refuse a connection that cannot carry every checkpoint: one
 * whose character set is not utf8mb4, or whose packets are too small. Resolves to the largest
 * packet the server takes (max_allowed_packet).
 */
async function migrate(pool: Pool, ns: string): Promise<number> {
  const conn = await pool.getConnection();
  const lock = `ckpt:migrate:${ns}`;
  try {
    const [[session]] = (await conn.query({
      sql: `SELECT @@max_allowed_packet AS bytes, @@character_set_client AS client,
                   @@character_set_connection AS connection, @@character_set_results AS results`,
      ...PLAIN_ROWS,
    })) as unknown as [[{ bytes: number; client: string; connection: string; results: string }]];
    // Another character set would turn what it cannot encode (emoji, most scripts) into '?'
    // or worse, silently, on the way in or out.
    const charset = [session.client, session.connection, session.results].find(
      (name) => name !== 'utf8mb4',
    );
    if (charset !== undefined) {
      throw invalidArgument(
        'pool',
        `the pool's connections use the character set ${charset}, which cannot carry every character a checkpoint may hold; create the pool with charset: 'utf8mb4' (mysql2's default).`,
      );
    }
    if (Number(session.bytes) < PACKET_NEEDED) {
      throw new CkptError(
        'UNSUPPORTED',
        `the server's max_allowed_packet is ${session.bytes} bytes; a checkpoint of 8 MiB needs at least ${PACKET_NEEDED}. Raise it (SET GLOBAL max_allowed_packet = 67108864, or max_allowed_packet in the server config).`,
      );
    }
    await conn.query('SELECT GET_LOCK(?, 60)', [lock]);
    const t = tables(ns);
    const [found] = (await conn.query({
      sql: 'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN (?)',
      values: [Object.values(t)],
      ...PLAIN_ROWS,
    })) as unknown as [{ name: string }[]];
    const names = new Set(found.map((r) => r.name));
    const recorded = names.has(t.meta)
      ? (
          (await conn.query({
            sql: `SELECT value FROM ${t.meta} WHERE k = 'schema_version'`,
            ...PLAIN_ROWS,
          })) as unknown as [{ value: string }[]]
        )[0]
      : undefined;
    const steps = migrations(ns);
    const current = migrationStart(
      {
        hasMeta: names.has(t.meta),
        recorded: recorded && (recorded[0]?.value ?? null),
        ownTables: [...names].filter((name) => name !== t.meta),
      },
      steps.length,
      `namespace '${ns}'`,
      '@ckpt/mysql',
    );
    if (current === 0) {
      await conn.query(
        `CREATE TABLE ${t.meta} (k VARCHAR(64) NOT NULL PRIMARY KEY, value VARCHAR(64) NOT NULL) ENGINE=InnoDB`,
      );
    }
    // A namespace already current is only read: a user that may only read opens it too.
    if (current < steps.length) {
      for (let v = current; v < steps.length; v++) {
        for (const statement of steps[v]!) await conn.query(statement);
      }
      await conn.query(
        `INSERT INTO ${t.meta} (k, value) VALUES ('schema_version', ?) ON DUPLICATE KEY UPDATE value = VALUES(value)`,
        [String(steps.length)],
      );
    }
    return Number(session.bytes);
  } finally {
    await conn.query('SELECT RELEASE_LOCK(?)', [lock]).catch(() => {});
    conn.release();
  }
}
