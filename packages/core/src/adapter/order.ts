/**
 * Orderings every backend must agree on. Strings compare by code point, which is the
 * same as comparing their UTF-8 bytes (and what a binary SQL collation does), unlike
 * JavaScript's `<`, which compares UTF-16 units.
 */
import type { StoredSession } from './backend.js';

/** Compare two strings by code point (= by UTF-8 bytes). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (0xD800..0xDFFF) encode code points above 0xFFFF, so they sort after
    // every other unit; elsewhere unit order is code point order.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** The catalog order of `sessions()`: updatedAt descending, then sessionId descending. */
export function compareSessionsNewestFirst(
  a: Pick<StoredSession, 'updatedAt' | 'sessionId'>,
  b: Pick<StoredSession, 'updatedAt' | 'sessionId'>,
): number {
  if (a.updatedAt !== b.updatedAt) return b.updatedAt - a.updatedAt;
  return compareCodePoints(b.sessionId, a.sessionId);
}

/**
 * The smallest string above every string that starts with `prefix` (null: none, when the
 * prefix is empty or made only of U+10FFFF), so that `key >= prefix AND key < bound` selects
 * exactly the keys with the prefix in byte order, using an index.
 */
export function prefixUpperBound(prefix: string): string | null {
  const chars = [...prefix];
  while (chars.length > 0) {
    const last = chars.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      // The next code point, stepping over the surrogate range, which no valid text holds.
      const next = last === 0xd7ff ? 0xe000 : last + 1;
      return chars.join('') + String.fromCodePoint(next);
    }
  }
  return null;
}

// Ids have at most 255 code points, so 256 of the highest code point sort above every id.
const ABOVE_EVERY_ID = '\u{10FFFF}'.repeat(256);

/**
 * The upper end of the session ids that start with `prefix` (non-empty), so that
 * `id >= prefix AND id < bound` selects exactly them in byte order, by a range of the index
 * on ids. Unlike `prefixUpperBound`, never null: a prefix made only of U+10FFFF gets a bound
 * above every id, which no id reaches.
 */
export function sessionIdPrefixBound(prefix: string): string {
  return prefixUpperBound(prefix) ?? ABOVE_EVERY_ID;
}
