/** What to do about MySQL's refusals, by mysql2's error names: the backend's `errorHint`. */
import { hintsByCode, SERVER_HINTS } from '@ckpt/core/adapter';

/** The hint for a failure mysql2 reports with one of these codes. */
export const mysqlErrorHint = hintsByCode({
  ER_ACCESS_DENIED_ERROR: SERVER_HINTS.loginRefused,
  ER_ACCESS_DENIED_NO_PASSWORD_ERROR: SERVER_HINTS.loginRefused,
  ER_BAD_DB_ERROR: SERVER_HINTS.missingDatabase,
  // MySQL's refusal of a database-wide privilege, CREATE ROUTINE included, not only of access.
  ER_DBACCESS_DENIED_ERROR: SERVER_HINTS.missingPrivilege,
  ER_TABLEACCESS_DENIED_ERROR: SERVER_HINTS.missingPrivilege,
  ER_PROCACCESS_DENIED_ERROR: SERVER_HINTS.missingPrivilege,
  ER_SPECIFIC_ACCESS_DENIED_ERROR: SERVER_HINTS.missingPrivilege,
});
