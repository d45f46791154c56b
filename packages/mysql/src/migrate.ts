/**
 * What runs once when a store opens: a check that the pool's connections can carry every
 * checkpoint, then the SQL family's migration under GET_LOCK, so that processes starting at
 * once migrate the namespace once. `destroy()` takes the same lock.
 */
import { CkptError, DEFAULT_MAX_PAYLOAD_BYTES } from '@ckpt/core';
import { invalidArgument, type StoreLocation } from '@ckpt/core/adapter';
import { migrate as runMigration } from '@ckpt/core/sql';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { PLAIN_ROWS } from './runner.js';
import { migrations, tables } from './schema.js';
import { procedures } from './stored-code.js';

// A packet must hold a checkpoint at the default limit plus the statement around it.
const PACKET_NEEDED = DEFAULT_MAX_PAYLOAD_BYTES + 1024 * 1024;

/**
 * Migrate namespace `ns` (or, given `existing`, only check that it is there at the latest
 * version); resolves to the largest packet the server takes (max_allowed_packet).
 */
export async function migrate(
  pool: Pool,
  ns: string,
  existing?: Omit<StoreLocation, 'where'>,
): Promise<number> {
  const conn = await pool.getConnection();
  try {
    const packetBytes = await checkConnection(conn);
    await migrateTables(conn, ns, existing);
    return packetBytes;
  } finally {
    conn.release();
  }
}

/**
 * Refuse a connection that cannot carry every checkpoint: one whose character set is not
 * utf8mb4, or whose packets are too small. Returns max_allowed_packet.
 */
async function checkConnection(conn: PoolConnection): Promise<number> {
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
  return Number(session.bytes);
}

/** Run `work` on `conn` holding the lock that keeps other processes from migrating `ns` at once. */
export async function underMigrationLock<T>(
  conn: PoolConnection,
  ns: string,
  work: () => Promise<T>,
): Promise<T> {
  const lock = `ckpt:migrate:${ns}`;
  try {
    await conn.query('SELECT GET_LOCK(?, 60)', [lock]);
    return await work();
  } finally {
    await conn.query('SELECT RELEASE_LOCK(?)', [lock]).catch(() => {});
  }
}

/** Bring the namespace's tables and procedures to SCHEMA_VERSION (with `existing`, only check). */
async function migrateTables(
  conn: PoolConnection,
  ns: string,
  existing: Omit<StoreLocation, 'where'> | undefined,
): Promise<void> {
  const t = tables(ns);
  const rows = async <Row>(sql: string, values: unknown[] = []) =>
    ((await conn.query({ sql, values, ...PLAIN_ROWS })) as unknown as [Row[]])[0];
  const runAll = async (statements: readonly string[]) => {
    for (const statement of statements) await conn.query(statement);
  };
  await runMigration<string[]>({
    where: `namespace '${ns}'`,
    pkg: '@ckpt/mysql',
    meta: t.meta,
    steps: migrations(ns),
    existing,
    locked: (work) => underMigrationLock(conn, ns, async () => work()),
    async tables() {
      const found = await rows<{ name: string }>(
        'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN (?)',
        [Object.values(t)],
      );
      return found.map((row) => row.name);
    },
    async version() {
      const found = await rows<{ value: string }>(
        `SELECT value FROM ${t.meta} WHERE k = 'schema_version'`,
      );
      return found[0]?.value ?? null;
    },
    async createMeta() {
      await conn.query(
        `CREATE TABLE ${t.meta} (k VARCHAR(64) NOT NULL PRIMARY KEY, value VARCHAR(64) NOT NULL) ENGINE=InnoDB`,
      );
    },
    run: runAll,
    routines: () => runAll(procedures(ns)),
    async record(version) {
      await conn.query(
        `INSERT INTO ${t.meta} (k, value) VALUES ('schema_version', ?) ON DUPLICATE KEY UPDATE value = VALUES(value)`,
        [String(version)],
      );
    },
  });
}
