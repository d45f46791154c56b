/** What to do about PostgreSQL's refusals, by SQLSTATE: the backend's `errorHint`. */
import { hintsByCode, SERVER_HINTS } from '@ckpt/core/adapter';

/** The hint for a failure pg reports with one of these SQLSTATEs. */
export const postgresErrorHint = hintsByCode({
  '28P01': SERVER_HINTS.loginRefused,
  '28000': SERVER_HINTS.loginRefused,
  '3D000': SERVER_HINTS.missingDatabase,
  '42501': SERVER_HINTS.missingPrivilege,
});
