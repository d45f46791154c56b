/**
 * A codec: one step of the chain that turns a value's JSON text into what is stored (a
 * compression or an encryption). Made by `compress()` and `encrypt()`; the store only takes
 * codecs they made.
 */
import { CkptError, type CkptErrorDetails } from '../values/errors.js';

/** A step of a store's `codecs` chain, as `compress()` or `encrypt()` made it. */
export interface Codec {
  /** What the codec is: `gzip`, `deflate`, `brotli`, `zstd` or `aes-256-gcm`. */
  readonly name: string;
}

/** What a codec does, kept out of its public face. */
export interface CodecStep {
  /**
   * Encode `bytes` for `place` (the value's place, bound into an encryption); null leaves them
   * as they are. `label` is what the stored value records of this step (`gzip`, `aes-256-gcm:k2`).
   */
  seal(bytes: Buffer, place: string): { bytes: Buffer; label: string } | null;
  /** Decode what a step labelled `label` made for `place`; refuses with UNREADABLE. */
  open(bytes: Buffer, label: string, place: string): Buffer;
}

// Which steps each codec object stands for: a codec is only what compress() or encrypt() made,
// and what it does is out of reach of code that is handed one (an encryption's keys above all).
const STEPS = new WeakMap<Codec, CodecStep>();

/** A codec with `step` behind it. */
export function makeCodec(name: string, step: CodecStep): Codec {
  const codec: Codec = Object.freeze({ name });
  STEPS.set(codec, step);
  return codec;
}

/** What `codec` does, or undefined when it was not made by `compress()` or `encrypt()`. */
export function stepOf(codec: unknown): CodecStep | undefined {
  return typeof codec === 'object' && codec !== null ? STEPS.get(codec as Codec) : undefined;
}

/** Why a stored value could not be read. */
export type UnreadableReason = 'codec' | 'key' | 'authentication' | 'damaged' | 'place';

/** The error for a stored value that cannot be read back; never says anything of a key's bytes. */
export function unreadable(
  reason: UnreadableReason,
  message: string,
  details: CkptErrorDetails = {},
): CkptError {
  return new CkptError('UNREADABLE', message, { details: { reason, ...details } });
}
