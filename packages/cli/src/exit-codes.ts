/** What the `ckpt` command's exit status means; the README lists them. */
import { type CkptErrorCode, isCkptError } from '@ckpt/core';

/** Each exit status of `ckpt`. */
export const EXIT = {
  /** It did what it was asked. */
  OK: 0,
  /** An unexpected failure (a bug: please report it with the message). */
  FAILURE: 1,
  /** The command line was wrong (an unknown command or option, a missing argument), or a destructive command was not confirmed. */
  USAGE: 2,
  /** The session, checkpoint or state key is not stored, or the store itself is not there. */
  NOT_FOUND: 3,
  /** A conflict: an expected head that moved, an id that exists. */
  CONFLICT: 4,
  /** Bad input: an invalid argument or value, a malformed export, a payload too large, a `--since` cursor the change log no longer holds. */
  INVALID: 5,
  /** The store cannot be used: unreachable, refused, a schema it cannot read, a missing adapter, a stored value it cannot decode. */
  STORE: 6,
  /** `ckpt doctor` found a problem (with `--strict`, a warning too). */
  DOCTOR: 7,
  /** Stopped by Ctrl-C (SIGINT), as a shell reports a command it interrupted (128 + 2). */
  INTERRUPTED: 130,
} as const;

const BY_CODE: Record<CkptErrorCode, number> = {
  NOT_FOUND: EXIT.NOT_FOUND,
  CONFLICT: EXIT.CONFLICT,
  INVALID_ARGUMENT: EXIT.INVALID,
  PAYLOAD_TOO_LARGE: EXIT.INVALID,
  BACKEND: EXIT.STORE,
  SCHEMA: EXIT.STORE,
  UNSUPPORTED: EXIT.STORE,
  CLOSED: EXIT.STORE,
  UNREADABLE: EXIT.STORE,
  EXPIRED: EXIT.INVALID,
};

/** The exit status for a failure. */
export function exitCodeOf(err: unknown): number {
  return isCkptError(err) ? BY_CODE[err.code] : EXIT.FAILURE;
}
