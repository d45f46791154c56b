/**
 * Encoded values as bytes, for backends with a bytes column (BLOB, bytea, LONGBLOB) or binary-safe
 * strings (Redis). Core hands a backend text: a value the codecs changed is
 * `ckpt1;<steps>;<owner>;<base64>` (see codecs/chain.ts), a third longer than its bytes. A backend that
 * can hold bytes stores it as
 *
 *     ckpt1b;<steps>;<owner>;<the bytes themselves>
 *
 * and JSON text as its UTF-8 bytes, and gives core back the text it was handed. Text read from
 * such a column (a row written before it held bytes) is read as it is, whichever form it has.
 */
import { ENCODED_MARKER as MARKER } from '../values/encoded-form.js';

const BYTES_MARKER = 'ckpt1b;';
const BYTES_MARKER_BYTES = Buffer.from(BYTES_MARKER, 'latin1');
const SEPARATOR = 0x3b; // ';'
/** A header `storedBytesOf` can move into bytes and back: two fields of printable ASCII but `;`. */
const MOVABLE_HEADER = /^ckpt1;[\x20-\x3a\x3c-\x7e]*;[\x20-\x3a\x3c-\x7e]*;$/;

/**
 * The bytes to store for `stored`, a value as core hands it to a backend. Exact: reading them
 * back with `textFromStoredBytes` gives `stored` again for any text but one that itself begins
 * `ckpt1b;` (which core never hands over: it is neither JSON nor the encoded form). A value that
 * is not in the encoded form, or not exactly so, is stored as its UTF-8 bytes.
 */
export function storedBytesOf(stored: string): Buffer {
  if (stored.startsWith(MARKER)) {
    const headerEnd = stored.lastIndexOf(';') + 1;
    const bytes = Buffer.from(stored.slice(headerEnd), 'base64');
    // Only a canonical base64 payload comes back as the same text; anything else stays text.
    if (
      MOVABLE_HEADER.test(stored.slice(0, headerEnd)) &&
      bytes.toString('base64') === stored.slice(headerEnd)
    ) {
      const header = BYTES_MARKER + stored.slice(MARKER.length, headerEnd);
      return Buffer.concat([Buffer.from(header, 'latin1'), bytes]);
    }
  }
  return Buffer.from(stored, 'utf8');
}

/**
 * What to hand a driver that sends a string as its UTF-8 bytes (ioredis does): `stored` itself
 * where those are the bytes `storedBytesOf` makes (a value not in the encoded form), so that a
 * plain value is neither copied nor sent apart from the rest of its command; else those bytes.
 */
export function storedBytesOrText(stored: string): Buffer | string {
  return stored.startsWith(MARKER) ? storedBytesOf(stored) : stored;
}

/**
 * The value core was handed, from what a backend holds: bytes `storedBytesOf` made, or text (a
 * row written as text before the column held bytes), which is read as it is.
 */
export function textFromStoredBytes(held: Uint8Array | string): string {
  if (typeof held === 'string') return held;
  const bytes = Buffer.isBuffer(held)
    ? held
    : Buffer.from(held.buffer, held.byteOffset, held.length);
  if (bytes.subarray(0, BYTES_MARKER_BYTES.length).equals(BYTES_MARKER_BYTES)) {
    const stepsEnd = bytes.indexOf(SEPARATOR, BYTES_MARKER_BYTES.length);
    const ownerEnd = stepsEnd === -1 ? -1 : bytes.indexOf(SEPARATOR, stepsEnd + 1);
    if (ownerEnd !== -1) {
      const header = bytes.toString('latin1', BYTES_MARKER_BYTES.length, ownerEnd + 1);
      return `${MARKER}${header}${bytes.toString('base64', ownerEnd + 1)}`;
    }
  }
  return bytes.toString('utf8');
}
