/** What to do about PostgreSQL's refusals, by SQLSTATE, and about another server at the URL: the backend's `errorHint`. */
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
});

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
    return undefined;
  };
}
