/** The pool a store runs on: one it opens from a URL (and closes), or the caller's own. */
import { invalidArgument, type OpenedConnection, openConnection } from '@ckpt/core/adapter';
import mysql, { type Pool } from 'mysql2/promise';

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
  /**
   * While every connection of the pool is busy, send the checkpoints that wait for one together:
   * one round trip and one transaction, each call in a savepoint of its own (default false: the
   * package README gives the figures). The backend's alone; the KV store ignores it.
   */
  groupCommit?: boolean;
  /**
   * Create (and migrate) the namespace's tables where they are not there (default true).
   * False opens only a namespace at this package's schema version, and writes nothing to open
   * it: a missing one is NOT_FOUND, an older one SCHEMA.
   */
  create?: boolean;
};

/** A pool, whether it is ours to close, the namespace, and whether to prepare statements. */
export interface Connection {
  pool: Pool;
  owned: boolean;
  /** The server's `host:port`, for messages. */
  address: string;
  namespace: string;
  /** Set with `create: false`: where the tables must be found (see `openConnection`). */
  existing: OpenedConnection<Pool>['existing'];
  preparedStatements: boolean;
  groupCommit: boolean;
  /** How many connections the pool opens at most. */
  poolSize: number;
}

/** Open (or adopt) the pool named by `options`. */
export function connect(options: MysqlOptions): Connection {
  const { handle, owned, namespace, existing, switches } = openConnection<Pool>(options, {
    factory: 'mysql',
    handle: 'pool',
    handleKind: "a mysql2 pool (from 'mysql2/promise' or 'mysql2')",
    methods: ['query', 'execute', 'getConnection'],
    example: 'mysql://user@host:3306/db',
    switches: { preparedStatements: true, groupCommit: false },
    // A callback-style pool (from 'mysql2') is used through its promise wrapper.
    adopt: (given) => {
      const promise = (given as { promise?: unknown }).promise;
      return typeof promise === 'function' ? promise.call(given) : given;
    },
    open: (url) => mysql.createPool({ uri: url, charset: 'utf8mb4', connectionLimit: 10 }),
  });
  const config = (handle as { pool?: { config?: PoolConfig } }).pool?.config;
  const { host, port, database } = config?.connectionConfig ?? {};
  if (owned && !database) refuseUrlWithoutDatabase(handle);
  return {
    pool: handle,
    owned,
    address: `${host ?? 'localhost'}:${port ?? 3306}`,
    namespace,
    existing,
    preparedStatements: switches.preparedStatements!,
    groupCommit: switches.groupCommit!,
    poolSize: config?.connectionLimit ?? 10,
  };
}

/** What the store reads of a mysql2 pool's configuration. */
interface PoolConfig {
  connectionLimit?: number;
  connectionConfig?: { host?: string; port?: number; database?: string };
}

/**
 * A URL without a database (`mysql://root@127.0.0.1:3306`) connects, but every statement then
 * fails with "No database selected": it is refused at once, saying what to add, and the pool
 * opened for it (which has made no connection yet) is ended.
 */
function refuseUrlWithoutDatabase(pool: Pool): never {
  void pool.end().catch(() => {});
  throw invalidArgument(
    'url',
    "mysql(): the url names no database; add one after the port, as in 'mysql://user@host:3306/dbname': the store keeps its tables there.",
  );
}
