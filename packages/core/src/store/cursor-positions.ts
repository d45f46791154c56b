/**
 * The positions the store's listing cursors carry, checked when a cursor comes back: its
 * method and listing are checked by `paging.ts`, but what it points at must still be a place
 * the listing can have.
 */
import type { SessionPosition } from '../adapter/backend.js';
import { invalidArgument } from '../values/errors.js';
import { describe } from '../values/validate.js';

const damaged = () => invalidArgument('cursor', 'cursor is damaged; start over with cursor null.');

/** `list()`: the seq the previous page ended on. */
export function listPosition(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw damaged();
  return value;
}

/** `transcript()`: the entry (seq, index) the previous page ended on. */
export function transcriptPosition(value: unknown): [number, number] {
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    !Number.isSafeInteger(value[0]) ||
    !Number.isSafeInteger(value[1]) ||
    value[0] < 1 ||
    value[1] < 0
  ) {
    throw damaged();
  }
  return [value[0], value[1]];
}

/** `sessions()`: the catalog entry (updatedAt, sessionId) the previous page ended on. */
export function sessionPosition(value: unknown): SessionPosition {
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    !Number.isSafeInteger(value[0]) ||
    typeof value[1] !== 'string'
  ) {
    throw invalidArgument(
      'cursor',
      `cursor is damaged (${describe(value)}); start over with null.`,
    );
  }
  return { updatedAt: value[0], sessionId: value[1] };
}
