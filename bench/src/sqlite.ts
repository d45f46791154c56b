/** SQLite: ckpt against raw better-sqlite3 on the same connection, its scaling, and LangGraph's saver. */
import { join } from 'node:path';
import { CheckpointStore } from '@ckpt/core';
import { sqlite } from '@ckpt/sqlite';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import { langgraphStep } from './langgraph.js';
import type { Plan } from './measure.js';
import type { Row } from './report.js';
import { agentLoop, populate, type Sizes, scaling, versusRaw } from './scenarios.js';

/** Every SQLite measurement, on files in `dir`. */
export async function benchSqlite(dir: string, plan: Plan, large: Sizes): Promise<Row[]> {
  const rows: Row[] = [];

  const backend = sqlite({ path: join(dir, 'vs-raw.db') });
  const store = new CheckpointStore(backend);
  backend.db.exec('CREATE TABLE bench_raw (id INTEGER PRIMARY KEY, data TEXT NOT NULL)');
  const insert = backend.db.prepare('INSERT INTO bench_raw (data) VALUES (?)');
  const select = backend.db.prepare('SELECT data FROM bench_raw WHERE id = ?').pluck();
  // A checkpoint writes four b-trees in one commit: the payload's, the checkpoint's row, the
  // session's row and the session list's index. The same shape in raw SQL, for reference: the
  // INSERT of the bytes, a row keyed (session, seq), and an update of one row whose indexed
  // time changes.
  backend.db.exec(`
    CREATE TABLE bench_raw_rows (session TEXT NOT NULL, seq INTEGER NOT NULL,
                                 PRIMARY KEY (session, seq)) WITHOUT ROWID;
    CREATE TABLE bench_raw_head (id TEXT PRIMARY KEY, seq INTEGER NOT NULL,
                                 updated_at INTEGER NOT NULL) WITHOUT ROWID;
    CREATE INDEX bench_raw_head_by_update ON bench_raw_head (updated_at);
    INSERT INTO bench_raw_head VALUES ('s', 0, 0);`);
  const insertRow = backend.db.prepare("INSERT INTO bench_raw_rows VALUES ('s', ?)");
  const moveHead = backend.db.prepare(
    "UPDATE bench_raw_head SET seq = ?, updated_at = ? WHERE id = 's'",
  );
  const insertFourBtrees = backend.db.transaction((encoded: string) => {
    const id = insert.run(encoded).lastInsertRowid;
    insertRow.run(id);
    moveHead.run(id, id);
  }).immediate;
  rows.push(
    ...(await versusRaw(
      'sqlite',
      store,
      {
        insert: (encoded) => insert.run(encoded).lastInsertRowid,
        select: (key) => select.get(key) as string,
        settle: () => backend.db.pragma('wal_checkpoint(TRUNCATE)'),
        references: [{ name: 'four b-trees', insert: insertFourBtrees }],
      },
      plan,
      { checkpoint: '<= 1.3x', load: '<= 1.2x' },
    )),
  );
  await store.close();

  const small: Sizes = { sessions: 100, checkpoints: 10 };
  for (const [name, sizes] of [
    ['small', small],
    ['large', large],
  ] as const) {
    // Setup only: synchronous OFF, then the measurement reopens the file with FULL.
    const filler = new CheckpointStore(
      sqlite({ path: join(dir, `${name}.db`), synchronous: 'off' }),
    );
    await populate(filler, sizes);
    await filler.close();
  }
  const stores = {
    small: new CheckpointStore(sqlite({ path: join(dir, 'small.db') })),
    large: new CheckpointStore(sqlite({ path: join(dir, 'large.db') })),
  };
  rows.push(...(await scaling('sqlite', stores, { small, large }, plan)));
  await stores.small.close();
  await stores.large.close();

  const loopStore = new CheckpointStore(sqlite({ path: join(dir, 'loop-ckpt.db') }));
  // The saver gets a handle configured exactly as ours: WAL, synchronous FULL.
  const db = new Database(join(dir, 'loop-langgraph.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  rows.push(
    ...(await agentLoop(
      'sqlite',
      loopStore,
      { name: '@langchain/langgraph-checkpoint-sqlite', step: langgraphStep(new SqliteSaver(db)) },
      plan,
    )),
  );
  await loopStore.close();
  db.close();
  return rows;
}

/** The durability settings the SQLite numbers were measured with. */
export function sqliteSettings(dir: string): Record<string, unknown> {
  const backend = sqlite({ path: join(dir, 'settings.db') });
  const settings = {
    journal_mode: backend.db.pragma('journal_mode', { simple: true }),
    synchronous: ['OFF', 'NORMAL', 'FULL', 'EXTRA'][
      backend.db.pragma('synchronous', { simple: true }) as number
    ],
    busy_timeout_ms: backend.db.pragma('busy_timeout', { simple: true }),
    sqlite_version: backend.db.prepare('SELECT sqlite_version()').pluck().get(),
  };
  backend.db.close();
  return settings;
}
