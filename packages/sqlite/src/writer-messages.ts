/** What the event loop and the writer thread say to each other over its message port. */
import type { Synchronous } from './connection.js';
import type { SentError } from './thread-errors.js';
import type { WriteCall } from './write-call.js';

/** What the writer thread opens: a file `openDatabase` opened and migrated. */
export interface WriterFile {
  path: string;
  namespace: string;
  synchronous: Synchronous;
  /** Whether its connection overwrites what it deletes (see `overwriteDeleted`). */
  secureDelete: boolean;
}

/**
 * To the thread: commit these calls as one batch; overwrite what is deleted from now on; or
 * close the connection and end.
 */
export type ToWriter =
  | { id: number; calls: WriteCall[] }
  | { secureDelete: true }
  | { close: true };

/** From the thread: the outcomes of batch `id`, in the order of its calls. */
export interface FromWriter {
  id: number;
  outcomes: ({ value: unknown } | { error: SentError })[];
}
