/** MySQL / MariaDB: ckpt against raw mysql2 on the same connection, and its scaling. */
import { CheckpointStore } from '@ckpt/core';
import { mysql } from '@ckpt/mysql';
import mysql2, { type Pool } from 'mysql2/promise';
import type { Plan } from './measure.js';
import type { Row } from './report.js';
import { populate, type Sizes, scaling, versusRaw } from './scenarios.js';

const stamp = Date.now().toString(36);

/** Every MySQL measurement, in fresh namespaces on the server at `url` (dropped afterwards). */
export async function benchMysql(url: string, plan: Plan, large: Sizes): Promise<Row[]> {
  const namespaces: string[] = [];
  const fresh = (name: string) => {
    const namespace = `bench_${stamp}_${name}`;
    namespaces.push(namespace);
    return namespace;
  };
  const pools: Pool[] = [];
  const openPool = (connectionLimit: number) => {
    const pool = mysql2.createPool({ uri: url, charset: 'utf8mb4', connectionLimit });
    pools.push(pool);
    return pool;
  };
  const rows: Row[] = [];
  try {
    // One connection: ckpt and the raw driver take turns on the very same one.
    const pool = openPool(1);
    const ns = fresh('raw');
    const store = new CheckpointStore(mysql({ pool, namespace: ns }));
    await store.head('warm-up'); // runs the migration
    await pool.query(
      `CREATE TABLE ${ns}_bench_raw (id BIGINT AUTO_INCREMENT PRIMARY KEY, data LONGTEXT NOT NULL) ENGINE=InnoDB`,
    );
    const insert = `INSERT INTO ${ns}_bench_raw (data) VALUES (?)`;
    const select = `SELECT data FROM ${ns}_bench_raw WHERE id = ?`;
    // ckpt prepares its statements (binary protocol) and runs them through the callback
    // interface underneath the promise pool, which skips the stack trace mysql2's promise
    // interface captures for every call: the raw calls made the same way, for reference.
    const prepared = (sql: string, values: (string | number)[]) =>
      new Promise((resolve, reject) => {
        pool.pool.execute(sql, values, (err, result) => (err ? reject(err) : resolve(result)));
      });
    rows.push(
      ...(await versusRaw(
        'mysql',
        store,
        {
          insert: async (encoded) =>
            ((await pool.query(insert, [encoded]))[0] as { insertId: number }).insertId,
          select: async (key) =>
            ((await pool.query(select, [key]))[0] as { data: string }[])[0]!.data,
          references: [
            {
              name: 'prepared, callback API',
              insert: (encoded) => prepared(insert, [encoded]),
              select: (key) => prepared(select, [key as number]),
            },
          ],
        },
        plan,
        { checkpoint: '<= 1.5x', load: '<= 1.2x' },
      )),
    );

    const small: Sizes = { sessions: 100, checkpoints: 10 };
    const names = { small: fresh('small'), large: fresh('large') };
    // Setup only: commits flushed once a second; measured with the server's setting restored.
    const filler = openPool(8);
    const [[before]] = (await filler.query(
      'SELECT @@innodb_flush_log_at_trx_commit AS v',
    )) as unknown as [[{ v: number }]];
    await filler.query('SET GLOBAL innodb_flush_log_at_trx_commit = 2');
    try {
      await populate(
        new CheckpointStore(mysql({ pool: filler, namespace: names.small })),
        small,
        8,
      );
      await populate(
        new CheckpointStore(mysql({ pool: filler, namespace: names.large })),
        large,
        8,
      );
    } finally {
      await filler.query(`SET GLOBAL innodb_flush_log_at_trx_commit = ${Number(before.v)}`);
    }
    const measured = openPool(2);
    const stores = {
      small: new CheckpointStore(mysql({ pool: measured, namespace: names.small })),
      large: new CheckpointStore(mysql({ pool: measured, namespace: names.large })),
    };
    rows.push(...(await scaling('mysql', stores, { small, large }, plan)));
  } finally {
    const admin = pools[0] ?? openPool(1);
    for (const ns of namespaces) {
      const like = `${ns}\\_%`;
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
    for (const pool of pools) await pool.end();
  }
  return rows;
}

/** The durability settings the MySQL numbers were measured with. */
export async function mysqlSettings(url: string): Promise<Record<string, unknown>> {
  const conn = await mysql2.createConnection({ uri: url });
  try {
    const [[row]] = (await conn.query(
      'SELECT VERSION() AS version, @@innodb_flush_log_at_trx_commit AS innodb_flush_log_at_trx_commit, @@sync_binlog AS sync_binlog, @@log_bin AS log_bin',
    )) as unknown as [[Record<string, unknown>]];
    return row;
  } finally {
    await conn.end();
  }
}
