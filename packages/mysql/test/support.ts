/** Shared by the MySQL tests: the server's URL, fresh namespaces, and cleanup. */
import { serviceAvailable, serviceUrl } from '@ckpt/contract-tests';
import { type MysqlBackend, mysql } from '@ckpt/mysql';
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

/** A backend in a fresh namespace, migrated. */
export async function freshBackend(): Promise<MysqlBackend> {
  const backend = mysql({ url, namespace: freshNamespace() });
  await backend.ready();
  return backend;
}

// Cleanup runs on a pool of its own: a test may have closed the backend's pool.
let admin: Pool | undefined;
afterAll(async () => {
  await admin?.end();
  admin = undefined;
});

/** Drop every table and procedure of `namespace`. */
export async function dropNamespace(namespace: string): Promise<void> {
  admin ??= mysql2.createPool({ uri: url, connectionLimit: 1 });
  const like = `${namespace}\\_%`;
  const [tables] = (await admin.query(
    'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
    [like],
  )) as unknown as [{ name: string }[]];
  for (const { name } of tables) await admin.query(`DROP TABLE IF EXISTS \`${name}\``);
  const [routines] = (await admin.query(
    'SELECT routine_name AS name FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name LIKE ?',
    [like],
  )) as unknown as [{ name: string }[]];
  for (const { name } of routines) await admin.query(`DROP PROCEDURE IF EXISTS \`${name}\``);
}

/** Close the backend and drop its namespace. */
export async function dropAndClose(backend: MysqlBackend): Promise<void> {
  await backend.close();
  await dropNamespace(backend.namespace);
}
