/**
 * Positions in a change log, as `changes()` makes and reads them: a log's entry numbers (one
 * number, or two for a log ordered by transaction and then entry) written at a fixed width, so
 * that positions sort as strings in the order of the log, as the contract asks.
 */
import { invalidArgument } from '../values/errors.js';

/** Digits of a part: enough for any unsigned 64-bit number. */
const WIDTH = 20;
const PART = /^\d{20}$/;

/** The position of the entry numbered `parts` (each a non-negative integer). */
export function logPosition(...parts: (number | bigint | string)[]): string {
  return parts.map((part) => String(part).padStart(WIDTH, '0')).join('.');
}

/**
 * The entry numbers of `position`, which must have `count` parts; a position this log did not
 * make is refused with INVALID_ARGUMENT (argument `since`).
 */
export function readLogPosition(position: string, count = 1): bigint[] {
  const parts = position.split('.');
  if (parts.length !== count || !parts.every((part) => PART.test(part))) {
    throw notThisLog(position);
  }
  return parts.map((part) => BigInt(part));
}

/**
 * INVALID_ARGUMENT (argument `since`) for `position`, which this log did not make: malformed,
 * or beyond the log's end (a cursor of another store, or of this one before it was destroyed),
 * which would otherwise wait for changes that never come.
 */
export function notThisLog(position: string) {
  return invalidArgument(
    'since',
    `since ${JSON.stringify(position)} is not a cursor of this store's change log; pass the cursor of an event watch() gave on this store.`,
  );
}
