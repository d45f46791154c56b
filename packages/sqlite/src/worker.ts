/**
 * The writer thread: it owns the store's write connection and commits the batches of write
 * calls the event loop posts, one at a time, in the order they arrive. Which transactions it
 * can run is what `sqliteTransactions` builds, so a new mutation needs nothing here.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { openWriter, overwriteDeleted } from './connection.js';
import { tables } from './schema.js';
import { backendStatements } from './statements.js';
import { sendError } from './thread-errors.js';
import { batchCommitter, type Outcome, type WriteCall } from './write-call.js';
import type { FromWriter, ToWriter, WriterFile } from './writer-messages.js';
import { sqliteTransactions } from './writes.js';

const file = workerData as WriterFile;
const port = parentPort!;

/** The connection and what commits on it, opened with the first batch. */
let writer:
  | { db: Database.Database; close(): void; commit(calls: WriteCall[]): Outcome[] }
  | undefined;

function open(): NonNullable<typeof writer> {
  const db = openWriter(file.path, file.synchronous, file.secureDelete);
  try {
    const t = tables(file.namespace);
    const { reads } = backendStatements(db, t);
    return {
      db,
      close: () => db.close(),
      commit: batchCommitter(db, sqliteTransactions(db, t, reads)),
    };
  } catch (err) {
    db.close();
    throw err;
  }
}

port.on('message', (message: ToWriter) => {
  if ('close' in message) {
    writer?.close();
    port.close();
    return;
  }
  if ('secureDelete' in message) {
    file.secureDelete = true;
    if (writer) overwriteDeleted(writer.db);
    return;
  }
  let outcomes: Outcome[];
  try {
    writer ??= open();
    outcomes = writer.commit(message.calls);
  } catch (err) {
    // The file could not be opened: every call of the batch says why.
    outcomes = message.calls.map(() => ({ error: err }));
  }
  const reply: FromWriter = {
    id: message.id,
    outcomes: outcomes.map((outcome) =>
      'error' in outcome ? { error: sendError(outcome.error) } : outcome,
    ),
  };
  port.postMessage(reply);
});
