/**
 * For this repository's tests: where each server is and what happens when one is not there, a
 * PostgreSQL server of a test's own to restart, and a store under load while its server drops
 * its connections.
 */

export {
  type DriverWords,
  type DroppedConnectionsReport,
  expectDroppedConnectionsSurvived,
  summary,
  writeWhileDropping,
} from './dropped-connections.js';
export { holdRunLock } from './run-lock.js';
export {
  type ScratchPostgres,
  scratchPostgresAvailable,
  startScratchPostgres,
} from './scratch-postgres.js';
export {
  SERVICES,
  serviceAddress,
  serviceAvailable,
  serviceListening,
  serviceUrl,
} from './services.js';
