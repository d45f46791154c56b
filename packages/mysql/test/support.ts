/** Shared by the MySQL tests: the server's URL, fresh namespaces, and cleanup. */
import { namespacePool } from '@ckpt/contract-tests/servers';
import { type MysqlBackend, mysql } from '@ckpt/mysql';
import { serviceAvailable, serviceUrl } from '@ckpt/test-servers';
import mysql2, { type Pool } from 'mysql2/promise';
import { afterAll } from 'vitest';

export const url = serviceUrl('mysql');

/** Whether the server answers (see `serviceAvailable`). */
export const available = await serviceAvailable(`MySQL/MariaDB at ${url}`, async () => {
  const conn = await mysql2.createConnection({ uri: url, connectTimeout: 3000 });
  await conn.end();
});

let made = 0;
/** A namespace no other test or run uses. */
export function freshNamespace(): string {
  return `t${process.pid}_${made++}_${Math.random().toString(36).slice(2, 8)}`;
}

/** A backend in `namespace` (default: a fresh one), migrated. */
export async function freshBackend(namespace = freshNamespace()): Promise<MysqlBackend> {
  const backend = mysql({ url, namespace });
  await backend.ready();
  return backend;
}

// Cleanup runs on a pool of its own: a test may have closed the backend's pool.
let admin: Pool | undefined;
/** A pool of its own for looking at and cleaning up the server, ended after the file's tests. */
export const adminPool = () => {
  admin ??= mysql2.createPool({ uri: url, connectionLimit: 1 });
  return admin;
};
const toDrop: string[] = [];
afterAll(async () => {
  await contractNamespaces.dropAll();
  for (const namespace of toDrop.splice(0)) await dropNamespace(namespace);
  await admin?.end();
  admin = undefined;
});

/** A fresh namespace whose tables and procedures are dropped after the file's tests. */
export function namespaceToDrop(): string {
  const namespace = freshNamespace();
  toDrop.push(namespace);
  return namespace;
}

/** The names of `namespace`'s tables, or of its procedures. */
async function namesOf(namespace: string, kind: 'tables' | 'routines'): Promise<string[]> {
  const column = kind === 'tables' ? 'table' : 'routine';
  // `_` is a LIKE wildcard: the namespace's own ones must match only themselves.
  const like = `${namespace.replaceAll('_', '\\_')}\\_%`;
  const [rows] = (await adminPool().query(
    `SELECT ${column}_name AS name FROM information_schema.${kind} WHERE ${column}_schema = DATABASE() AND ${column}_name LIKE ?`,
    [like],
  )) as unknown as [{ name: string }[]];
  return rows.map((row) => row.name);
}

/** The names of every table and procedure of `namespace`, sorted. */
export async function namespaceObjects(namespace: string): Promise<string[]> {
  return [
    ...(await namesOf(namespace, 'tables')),
    ...(await namesOf(namespace, 'routines')),
  ].sort();
}

/** Drop every table and procedure of `namespace`. */
export async function dropNamespace(namespace: string): Promise<void> {
  for (const name of await namesOf(namespace, 'tables')) {
    await adminPool().query(`DROP TABLE IF EXISTS \`${name}\``);
  }
  for (const name of await namesOf(namespace, 'routines')) {
    await adminPool().query(`DROP PROCEDURE IF EXISTS \`${name}\``);
  }
}

/** Close the backend and drop its namespace. */
export async function dropAndClose(backend: MysqlBackend): Promise<void> {
  await backend.close();
  await dropNamespace(backend.namespace);
}

/** The contract suite's namespaces, emptied and used again from case to case (see `namespacePool`). */
export const contractNamespaces = namespacePool({
  fresh: freshNamespace,
  // Every table but `<namespace>_meta`, which records the schema version.
  empty: async (namespace) => {
    for (const name of await namesOf(namespace, 'tables')) {
      if (name !== `${namespace}_meta`) await adminPool().query(`DELETE FROM \`${name}\``);
    }
  },
  drop: dropNamespace,
});

/** The ids of the connections `backend`'s pool opens from now on, as the server numbers them. */
export function connectionIds(backend: MysqlBackend): Set<number> {
  const ids = new Set<number>();
  backend.pool.on('connection', (conn: { threadId: number }) => ids.add(conn.threadId));
  return ids;
}

/** KILL CONNECTION each of `ids` that is still open: the store's, and no one else's. */
export async function killAll(ids: Set<number>): Promise<void> {
  for (const id of [...ids]) {
    ids.delete(id);
    await adminPool()
      .query(`KILL CONNECTION ${id}`)
      .catch(() => {}); // closed already
  }
}
