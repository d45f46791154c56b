/**
 * Page limits and cursors. A cursor is opaque to callers: base64url of a small JSON record
 * naming the method and the listing it came from, so that a cursor passed to another
 * method (or another session's listing) is refused instead of silently misread.
 */
import { invalidArgument } from '../values/errors.js';
import { checkOptions, describe } from '../values/validate.js';
import type { PageOptions } from './types.js';

/** The default and largest page sizes. */
export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 1000;

/** A listing a cursor belongs to: the method and, where there is one, its session or scope. */
export interface CursorOwner {
  method: 'list' | 'transcript' | 'sessions' | 'keys' | 'stateScopes';
  listing: string;
}

/** The validated parts of a `PageOptions` argument. */
export interface PageRequest<P> {
  limit: number;
  /** Where the previous page ended; null for the first page. */
  after: P | null;
}

/** Validate `page` and decode its cursor for `owner`. */
export function readPage<P>(
  page: (PageOptions & { prefix?: string; beforeSeq?: number; where?: object }) | undefined,
  owner: CursorOwner,
  known: readonly ('limit' | 'cursor' | 'prefix' | 'beforeSeq' | 'where')[] = ['limit', 'cursor'],
): PageRequest<P> {
  const options = checkOptions(page, 'page', known, `${owner.method}()`);
  const limit = options.limit === undefined ? DEFAULT_PAGE_LIMIT : options.limit;
  if (
    typeof limit !== 'number' ||
    !Number.isInteger(limit) ||
    limit < 1 ||
    limit > MAX_PAGE_LIMIT
  ) {
    throw invalidArgument(
      'limit',
      `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}, got ${describe(limit)}.`,
    );
  }
  const cursor = options.cursor;
  if (cursor === undefined || cursor === null) return { limit, after: null };
  return { limit, after: decodeCursor<P>(cursor, owner) };
}

/** Make the cursor that continues `owner`'s listing after `position`. */
export function encodeCursor<P>(owner: CursorOwner, position: P): string {
  return Buffer.from(JSON.stringify([owner.method, owner.listing, position]), 'utf8').toString(
    'base64url',
  );
}

function decodeCursor<P>(cursor: unknown, owner: CursorOwner): P {
  const refuse = () =>
    invalidArgument(
      'cursor',
      `cursor was not produced by ${owner.method}() for this listing; pass back the cursor of the previous page unchanged, or null to start over.`,
    );
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 4096) throw refuse();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw refuse();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    parsed[0] !== owner.method ||
    parsed[1] !== owner.listing ||
    parsed[2] === null ||
    parsed[2] === undefined
  ) {
    throw refuse();
  }
  return parsed[2] as P;
}

/** Build a page from up to `limit + 1` fetched items: the extra one only proves there is more. */
export function toPage<T, P>(
  fetched: T[],
  limit: number,
  owner: CursorOwner,
  positionOf: (last: T) => P,
): { items: T[]; cursor: string | null } {
  if (fetched.length <= limit) return { items: fetched, cursor: null };
  const items = fetched.slice(0, limit);
  return { items, cursor: encodeCursor(owner, positionOf(items[items.length - 1]!)) };
}
