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
