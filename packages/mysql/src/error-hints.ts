/** What to do about MySQL's refusals and lost connections, by mysql2's error names, and about another server at the URL: the backend's `errorHint`. */
import { type ErrorHint, hintsByCode, otherServerHint, SERVER_HINTS } from '@ckpt/core/adapter';

/** The hint for a failure mysql2 reports with one of these codes. */
export const mysqlErrorHint = hintsByCode({
  ER_ACCESS_DENIED_ERROR: SERVER_HINTS.loginRefused,
  ER_ACCESS_DENIED_NO_PASSWORD_ERROR: SERVER_HINTS.loginRefused,
  ER_BAD_DB_ERROR: SERVER_HINTS.missingDatabase,
  ER_NO_DB_ERROR:
    "the connection names no database: give the pool a database option, or a URL that ends in '/dbname'",
  // MySQL's refusal of a database-wide privilege, CREATE ROUTINE included, not only of access.
  ER_DBACCESS_DENIED_ERROR: SERVER_HINTS.missingPrivilege,
  ER_TABLEACCESS_DENIED_ERROR: SERVER_HINTS.missingPrivilege,
  ER_PROCACCESS_DENIED_ERROR: SERVER_HINTS.missingPrivilege,
  ER_SPECIFIC_ACCESS_DENIED_ERROR: SERVER_HINTS.missingPrivilege,
  // The connection went under a call: the server closed it (KILL, a crash, a network cut)
  // with no word, or ended the call as it shut down.
  PROTOCOL_CONNECTION_LOST: SERVER_HINTS.connectionLost,
  ER_SERVER_SHUTDOWN: SERVER_HINTS.connectionLost,
});

// mysql2's words for a statement sent on a connection that had already broken.
const CLOSED_STATE = "Can't add new command when connection is in closed state";

/**
 * The backend's hint: a refusal's remedy, or what to do about another server at `address`.
 * mysql2 waits for the server to greet it first; another kind of server waits for its own
 * client to speak, so nothing happens until mysql2's connect timeout ends it with an
 * ETIMEDOUT of its own, which carries no address (Node's, for a host that never answered the
 * TCP connection, does).
 */
export function mysqlHints(address: string): ErrorHint {
  return (err) => {
    const byCode = mysqlErrorHint(err);
    if (byCode !== undefined) return byCode;
    if ((err as Error | null)?.message === CLOSED_STATE) return SERVER_HINTS.connectionLost;
    const timedOut = err as { code?: unknown; address?: unknown } | null;
    if (timedOut?.code === 'ETIMEDOUT' && timedOut.address === undefined) {
      return otherServerHint('MySQL', address, 'silent');
    }
    return undefined;
  };
}
