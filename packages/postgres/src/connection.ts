/** The pool a store runs on: one it opens from a URL (and closes), or the caller's own. */
import {
  CONNECT_TIMEOUT_MS,
  type OpenedConnection,
  openConnection,
  urlAddress,
} from '@ckpt/core/adapter';
import pg from 'pg';
import { checkOwnSchema } from './schema.js';

/** Options of `postgres()` and `postgresKv()`: a connection string or an existing pool. */
export type PostgresOptions = ({ url: string } | { pool: pg.Pool }) & {
  /** The schema that holds every table and function; default `ckpt`. */
  namespace?: string;
  /**
   * Prepare statements once per connection (default true). False sends every statement
   * unnamed: for a proxy that pins a client to one server connection once it prepares a
   * statement, such as RDS Proxy.
   */
  preparedStatements?: boolean;
  /**
   * While every connection of the pool is busy, send the checkpoints that wait for one together:
   * one round trip and one transaction, each call in a subtransaction of its own (default true).
   * The backend's alone; the KV store ignores it.
   */
  groupCommit?: boolean;
  /**
   * Wake watchers (`watch()`) with LISTEN/NOTIFY, on connections of their own to the pool's
   * server (default true). False: watchers read the change log every 100 ms, and writes send no
   * notification; for a proxy that cannot hold a LISTEN, such as PgBouncer in transaction mode.
   * The backend's alone; the KV store ignores it.
   */
  listen?: boolean;
  /**
   * Create (and migrate) the schema where it is not there (default true). False opens only a
   * schema that holds the store at this package's version, and writes nothing to open it: a
   * missing one is NOT_FOUND, an older one SCHEMA.
   */
  create?: boolean;
};

/** A pool, whether it is ours to close, the namespace, and whether to prepare statements. */
export interface Connection {
  pool: pg.Pool;
  owned: boolean;
  /** The server's `host:port`, for messages. */
  address: string;
  /** The database pg connects to because the URL names none (see `defaultDatabase`). */
  defaultDatabase: string | undefined;
  namespace: string;
  /** Set with `create: false`: where the schema must be found (see `openConnection`). */
  existing: OpenedConnection<pg.Pool>['existing'];
  preparedStatements: boolean;
  groupCommit: boolean;
  listen: boolean;
}

/** Open (or adopt) the pool named by `options`. */
export function connect(options: PostgresOptions): Connection {
  const { handle, owned, namespace, existing, switches } = openConnection<pg.Pool>(options, {
    factory: 'postgres',
    handle: 'pool',
    handleKind: 'a pg.Pool',
    methods: ['query', 'connect'],
    example: 'postgres://user@host:5432/db',
    switches: { preparedStatements: true, groupCommit: true, listen: true },
    refuseNamespace: checkOwnSchema,
    open(url) {
      // A pool reads its URL only when it first connects; a client reads it at once, so a
      // URL the driver cannot read is refused here rather than at the first call.
      new pg.Client({ connectionString: url });
      // allowExitOnIdle: idle connections do not keep the process alive, so a script that
      // never calls close() still exits once its calls are done.
      const pool = new pg.Pool({
        connectionString: url,
        max: 10,
        allowExitOnIdle: true,
        Client: clientWaiting(connectTimeoutMs(url)),
      });
      // A connection that breaks while idle is dropped from the pool; the next call gets a
      // fresh one. Without a listener, the pool would crash the process.
      pool.on('error', () => {});
      return pool;
    },
  });
  const database = defaultDatabase(handle);
  return {
    pool: handle,
    owned,
    address: poolAddress(handle),
    defaultDatabase: database,
    namespace,
    // Where the schema was looked for names the database too, when the URL does not.
    existing:
      existing && database !== undefined
        ? { ...existing, at: `${existing.at} (database '${database}', the default)` }
        : existing,
    preparedStatements: switches.preparedStatements!,
    groupCommit: switches.groupCommit!,
    listen: switches.listen!,
  };
}

/**
 * How long to wait for the server to answer a new connection: the URL's `connect_timeout`,
 * in seconds as libpq reads it (0 waits without limit), or `CONNECT_TIMEOUT_MS`. pg reads no
 * such parameter and would wait forever on a server that accepts and never answers.
 */
function connectTimeoutMs(url: string): number {
  let given: string | null;
  try {
    given = new URL(url).searchParams.get('connect_timeout');
  } catch {
    return CONNECT_TIMEOUT_MS; // a form pg reads and URL does not, such as a socket path alone
  }
  if (given === null) return CONNECT_TIMEOUT_MS;
  if (!/^\d+$/.test(given)) {
    throw new Error(`connect_timeout must be a whole number of seconds; got '${given}'`);
  }
  return Number(given) * 1000;
}

/**
 * pg's client, with its wait for a new connection bounded. On the client, not the pool: the
 * pool would bound the wait for a free connection under load too, which stays unbounded.
 */
function clientWaiting(timeoutMs: number): typeof pg.Client {
  return class extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: timeoutMs });
    }
  };
}

/**
 * The database pg connects to when the pool's connection string names none
 * (`postgres://user@host:5432`): PGDATABASE, else the user's name; undefined when the string
 * names one, or when the pool was configured without a string.
 */
function defaultDatabase(pool: pg.Pool): string | undefined {
  const { connectionString } = (pool as { options?: pg.PoolConfig }).options ?? {};
  if (!connectionString) return undefined;
  try {
    const { pathname, searchParams } = new URL(connectionString);
    if ((pathname !== '' && pathname !== '/') || searchParams.has('database')) return undefined;
  } catch {
    return undefined; // a form pg reads and URL does not, such as a socket path alone
  }
  return new pg.Client({ connectionString }).database;
}

/** `host:port` of the server `pool` connects to, as its options or connection string name it. */
function poolAddress(pool: pg.Pool): string {
  const { host, port, connectionString } = (pool as { options?: pg.PoolConfig }).options ?? {};
  const fromUrl = connectionString ? urlAddress(connectionString, 5432) : undefined;
  return fromUrl ?? `${host ?? 'localhost'}:${port ?? 5432}`;
}
