/** What to do about PostgreSQL's refusals and lost connections, by SQLSTATE, and about another server at the URL: the backend's `errorHint`. */
import {
  type ErrorHint,
  errorCode,
  hintsByCode,
  otherServerHint,
  SERVER_HINTS,
} from '@ckpt/core/adapter';

/**
 * A read makes text of the bytes a value column holds (value_text, stored-code.ts); bytes that
 * are neither UTF-8 text nor the encoded form make no text, and ckpt never writes them.
 */
const UNREADABLE_BYTES =
  "a value the store holds is neither UTF-8 text nor ckpt's encoded form (or holds a NUL byte), so the server cannot send it as text: something other than ckpt wrote it; overwrite or delete that checkpoint or state value";

/** The hint for a failure pg reports with one of these SQLSTATEs. */
export const postgresErrorHint = hintsByCode({
  '28P01': SERVER_HINTS.loginRefused,
  '28000': SERVER_HINTS.loginRefused,
  '3D000': SERVER_HINTS.missingDatabase,
  '42501': SERVER_HINTS.missingPrivilege,
  '22021': UNREADABLE_BYTES,
  // The server ended the session: an administrator (pg_terminate_backend) or a fast or smart
  // shutdown, the crash of another server process, an idle session's timeout.
  '57P01': SERVER_HINTS.connectionLost,
  '57P02': SERVER_HINTS.connectionLost,
  '57P05': SERVER_HINTS.connectionLost,
  // Refused at connect: starting up, shutting down, in recovery.
  '57P03': SERVER_HINTS.serverNotReady,
});

// pg's words for a connection that broke under a call (its socket closed, with no word from
// the server or after it), or that had broken before a statement was sent on it.
const LOST = new Set([
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
]);

// pg's words for a server that answered in another protocol (MySQL's greeting reads as a
// CopyData message), and for a connection given up on before the handshake ended: by a
// pool's connectionTimeoutMillis, or by a client's (as on the pools the store opens).
const NOT_POSTGRES = /^Received unexpected \w+ message from backend/;
const HANDSHAKE_TIMEOUTS = new Set([
  'Connection terminated due to connection timeout',
  'timeout expired',
]);

/**
 * The backend's hint: a SQLSTATE's remedy, or what to do about another server at `address`.
 * `defaultDatabase` is the database pg asked for because the URL names none: a missing one is
 * then no typo in the URL, but the URL's lack of a database.
 */
export function postgresHints(address: string, defaultDatabase?: string): ErrorHint {
  return (err) => {
    if (defaultDatabase !== undefined && errorCode(err) === '3D000') {
      return `the URL names no database, so pg asked for '${defaultDatabase}', the default (PGDATABASE, else the user's name): add one after the port, as in 'postgres://user@host:5432/dbname'`;
    }
    const byCode = postgresErrorHint(err);
    if (byCode !== undefined) return byCode;
    const message = String((err as Error | null)?.message);
    if (NOT_POSTGRES.test(message)) return otherServerHint('PostgreSQL', address, 'garbled');
    if (HANDSHAKE_TIMEOUTS.has(message)) return otherServerHint('PostgreSQL', address, 'silent');
    if (LOST.has(message)) return SERVER_HINTS.connectionLost;
    return undefined;
  };
}
