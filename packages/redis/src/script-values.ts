/**
 * How values cross into the scripts (statements.ts) and back: times and seqs as the scripts
 * take them, and a checkpoint as they return it.
 */
import type { StoredCheckpoint } from '@ckpt/core/adapter';

/** A script's or a command's reply: its fields, null where a field is missing. */
export type Reply = (string | null)[];

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

/** A checkpoint from its seq, info text, data and pin text, as the scripts return them. */
export function checkpoint(seq: string, info: string, data: string, pin: string): StoredCheckpoint {
  return { seq: Number(seq), ...parseInfoAndPin(info, pin), data };
}
