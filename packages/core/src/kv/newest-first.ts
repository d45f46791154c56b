/**
 * Text whose ascending order (by code points, the order in which `KvStore.list` answers keys)
 * is the catalog's order: updatedAt descending, then session id descending by code points. A
 * KV store lists only upwards, so both are written reversed:
 *
 *   TIME:ID~
 *
 * - TIME is MAX_SAFE_INTEGER - updatedAt in 16 decimal digits (updatedAt is a safe integer, at
 *   least 0), so a later time sorts first;
 * - ID is the id a code point at a time, each written as 0x10FFFF - code point in 4 base-36
 *   digits, so a greater code point sorts first; and `~` ends it, which sorts above every digit,
 *   so that an id sorts after the longer ids it begins (`ab` comes before `a` when descending).
 *   No ID is the beginning of another, so whatever follows the `~` never changes the order.
 */
import type { SessionPosition } from '../adapter/backend.js';

const TIME_DIGITS = 16;
const MAX_CODE_POINT = 0x10ffff;
const DIGITS_A_CODE_POINT = 4;
const END = '~';
const FORMAT = /^(\d{16}):((?:[0-9a-z]{4})*)~/;

/** The text of catalog position (`updatedAt`, `sessionId`). */
export function newestFirst(updatedAt: number, sessionId: string): string {
  let id = '';
  for (const char of sessionId) {
    id += (MAX_CODE_POINT - char.codePointAt(0)!).toString(36).padStart(DIGITS_A_CODE_POINT, '0');
  }
  const time = String(Number.MAX_SAFE_INTEGER - updatedAt).padStart(TIME_DIGITS, '0');
  return `${time}:${id}${END}`;
}

/**
 * The position `text` begins with (as `newestFirst` wrote it), and what follows it; null when it
 * begins with no such position.
 */
export function readNewestFirst(text: string): { position: SessionPosition; rest: string } | null {
  const parts = FORMAT.exec(text);
  if (parts === null) return null;
  let sessionId = '';
  for (let i = 0; i < parts[2]!.length; i += DIGITS_A_CODE_POINT) {
    const code = MAX_CODE_POINT - Number.parseInt(parts[2]!.slice(i, i + DIGITS_A_CODE_POINT), 36);
    // Digits no code point gave: not text this file wrote.
    if (code < 0 || (code >= 0xd800 && code <= 0xdfff)) return null;
    sessionId += String.fromCodePoint(code);
  }
  return {
    position: { updatedAt: Number.MAX_SAFE_INTEGER - Number(parts[1]), sessionId },
    rest: text.slice(parts[0].length),
  };
}

/**
 * The text above every text that begins with `position`'s (whatever follows it, as long as it
 * sorts below `~`), and below that of every position after it in the catalog's order: where
 * a listing resumes past `position`. Null when no stored position comes after it (a time
 * before 0).
 */
export function pastNewestFirst(position: SessionPosition): string | null {
  if (position.updatedAt < 0) return null;
  return newestFirst(position.updatedAt, position.sessionId) + END;
}
