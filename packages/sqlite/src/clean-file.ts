/**
 * Whether a SQLite file may still hold values from before its store encrypted them. A row deleted
 * or rewritten leaves its bytes in the file (in the unused space of its page, or in a page freed
 * to the file's freelist) unless the connection overwrote them (secure_delete, on while a store
 * encrypts); and SQLite leaves copies of rows it moved between pages in their old places, which
 * secure_delete does not overwrite. Only a file written anew (VACUUM), or made by a store that
 * encrypted from the start, holds nothing but what it stores; the namespace's meta table records
 * when a store that encrypts last left its file so, which doctor reads.
 */
import type { Diagnosis } from '@ckpt/core/adapter';
import type Database from 'better-sqlite3';
import { tables } from './schema.js';

const KEY = 'encrypted_file_clean_since';

/** How the file came to hold only what is stored. */
export type Cleaned = 'created' | 'vacuumed';

/** Record that a store that encrypts left the file holding only what it stores, now. */
export function markClean(db: Database.Database, namespace: string, how: Cleaned): void {
  db.prepare(
    `INSERT INTO ${tables(namespace).meta} (key, value) VALUES (?, ?)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
  ).run(KEY, `${how} ${new Date().toISOString()}`);
}

/** Whether namespace `namespace` holds no value yet (no checkpoint data, no state value). */
export function holdsNoValues(db: Database.Database, namespace: string): boolean {
  const t = tables(namespace);
  return (
    db.prepare(`SELECT 1 FROM ${t.bodies} UNION ALL SELECT 1 FROM ${t.state} LIMIT 1`).get() ===
    undefined
  );
}

/** The finding on a file whose store encrypts: may it hold values from before? */
export function cleanFileDiagnosis(db: Database.Database, namespace: string): Diagnosis {
  const recorded = db
    .prepare(`SELECT value FROM ${tables(namespace).meta} WHERE key = ?`)
    .pluck()
    .get(KEY) as string | undefined;
  const file = JSON.stringify(db.name);
  if (recorded !== undefined) {
    const [how, at] = recorded.split(' ');
    return {
      check: 'free space',
      status: 'ok',
      detail: `${file} was ${how === 'created' ? 'created by a store that encrypts' : 'written anew (VACUUM) by a store that encrypts'} at ${at}; since then what such a store deletes is overwritten (secure_delete). A store without the keys that wrote to it since would not show here.`,
    };
  }
  const free = Number(db.pragma('freelist_count', { simple: true }));
  return {
    check: 'free space',
    status: 'warn',
    detail: `${file} has not been written anew since its values were encrypted: values stored or replaced before, plain ones among them, may remain in its ${free === 1 ? 'free page' : `${free} free pages`} and in the unused space of its pages`,
    fix: `write the file anew: ckpt rekey --vacuum with the store's keys (which rewrites nothing already under the current key), or VACUUM in the sqlite3 shell on ${file}`,
  };
}
