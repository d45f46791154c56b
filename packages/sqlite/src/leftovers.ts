/**
 * What stays of replaced values in a SQLite file, and reclaiming it. A row deleted or rewritten
 * leaves its bytes in the page it was on, or in a page freed to the file's freelist, unless the
 * connection overwrote them (secure_delete, on while a store encrypts: see `overwriteDeleted`);
 * and WAL mode keeps copies of the pages recent transactions wrote in the -wal file until it is
 * written over. VACUUM writes the file anew, holding only what is stored; a checkpoint that
 * truncates the -wal then empties that.
 */
import type { Leftovers } from '@ckpt/core/adapter';
import type Database from 'better-sqlite3';

/** What stays of replaced values in `db`'s file; `vacuumed` is called once VACUUM has run. */
export function leftovers(db: Database.Database, vacuumed: () => void): Leftovers {
  if (db.memory) {
    return { remain: 'Nothing remains: the database is in memory and ends with the process.' };
  }
  const file = JSON.stringify(db.name);
  return {
    remain: `Values replaced or deleted while nothing overwrote them (SQLite's secure_delete is on only while a store encrypts) may remain in ${file}: in its free pages and the unused space of its pages until VACUUM writes the file anew, and in its -wal file until SQLite writes over it.`,
    reclaim: async () => {
      db.exec('VACUUM');
      vacuumed();
      const [wal] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      return wal?.busy === 0
        ? `vacuumed ${file}: it holds only what is stored, and its -wal file is empty.`
        : `vacuumed ${file}: it holds only what is stored; its -wal file, which a process reading the store keeps in use, may still hold copies of old pages until SQLite writes over it. Run the same again when no process has the store open.`;
    },
  };
}
