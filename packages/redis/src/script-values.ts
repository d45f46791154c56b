/**
 * How values cross into the scripts (statements.ts) and back: times and seqs as the scripts
 * take them, stored values as bytes, and a checkpoint as they return it.
 */
import { type StoredCheckpoint, textFromStoredBytes } from '@ckpt/core/adapter';

/** A script's or a command's reply: its fields, null where a field is missing. */
export type Reply = (string | null)[];

/**
 * A reply read for bytes (`Script.runForBytes`, ioredis's `…Buffer` commands): every string in
 * it as the bytes Redis holds, null where a field is missing. Checkpoint data, transcript items
 * and state values are stored as `storedBytesOf` makes them (an encoded value as its bytes, not
 * their base64), or, written at layout version 1 (see migrate.ts), as UTF-8 text; the scripts
 * store and return them untouched, and `textFromStoredBytes` reads either. They are handed to
 * ioredis through `storedBytesOrText`: a plain value as its text, which it sends as those bytes.
 */
export type BytesReply = (Buffer | number | null)[];

/** A field of a reply read for bytes that holds text (a seq, an info, a pin, a status). */
export function textOf(field: Buffer | number): string;
export function textOf(field: Buffer | number | null | undefined): string | null;
export function textOf(field: Buffer | number | null | undefined): string | null {
  if (field == null) return null;
  // A number a script returns arrives as an integer, not as bytes.
  return typeof field === 'number' ? String(field) : field.toString('utf8');
}

/** Milliseconds as the scripts store them: 15 digits, so that text order is time order. */
export const padTime = (ms: number) => String(ms).padStart(15, '0');

/** A seq as a script's argument: '' for none. */
export const seqArg = (seq: number | null | undefined) =>
  seq === null || seq === undefined ? '' : String(seq);

/** A checkpoint's info text, `<parent> <createdAt> <metadata>`, taken apart. */
export function parseInfo(info: string): {
  parent: number | null;
  createdAt: number;
  metadata: string;
} {
  const first = info.indexOf(' ');
  const second = info.indexOf(' ', first + 1);
  return {
    parent: first === 0 ? null : Number(info.slice(0, first)),
    createdAt: Number(info.slice(first + 1, second)),
    metadata: info.slice(second + 1),
  };
}

/**
 * A pin as the pins hash holds it and the scripts return it: `-` for a pin without a note,
 * `+` and the note for one with a note (which may be empty), and `''` from a script for a
 * checkpoint that is not pinned.
 */
export const pinArg = (note: string | null) => (note === null ? '-' : `+${note}`);

/** A checkpoint's pin from its text as the scripts return it (see pinArg). */
export function parsePin(pin: string): { pinned: boolean; pinNote: string | null } {
  if (pin === '') return { pinned: false, pinNote: null };
  return { pinned: true, pinNote: pin.startsWith('+') ? pin.slice(1) : null };
}

/** A checkpoint's info and pin, as listings return them, taken apart. */
export function parseInfoAndPin(info: string, pin: string): Omit<StoredCheckpoint, 'seq' | 'data'> {
  return { ...parseInfo(info), ...parsePin(pin) };
}

/** A checkpoint from its seq, info text, data and pin text, as the scripts return them read for bytes. */
export function checkpoint(seq: Buffer, info: Buffer, data: Buffer, pin: Buffer): StoredCheckpoint {
  return {
    seq: Number(textOf(seq)),
    ...parseInfoAndPin(textOf(info), textOf(pin)),
    data: textFromStoredBytes(data),
  };
}
