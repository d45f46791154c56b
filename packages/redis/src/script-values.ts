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

/** A checkpoint from its seq, info text and data, as the scripts return them. */
export function checkpoint(seq: string, info: string, data: string): StoredCheckpoint {
  return { seq: Number(seq), ...parseInfo(info), data };
}
