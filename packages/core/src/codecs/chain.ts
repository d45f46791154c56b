/**
 * A store's codec chain, and the form of what it stores. A value the chain changed is stored as
 *
 *     ckpt1;<steps>;<owner>;<base64 of the bytes>
 *
 * where `<steps>` lists, in the order they ran, what each codec recorded (`gzip`,
 * `aes-256-gcm:k2`) and `<owner>` is the percent-encoded id of the session an encrypted checkpoint
 * value was written for, which its encryption binds it to. It is empty for a state value, and
 * for a value no codec encrypted: there it would bind nothing and cost each stored value the
 * session's id again (values written before kept it; it reads the same). No JSON text begins with `c`, so a value stored before
 * the codecs were turned on, or one every codec left as it is, is told apart and read as it is.
 * The form holds no newline, which the KV layout separates a body's parts with.
 */
import { ENCODED_MARKER as MARKER } from '../values/encoded-form.js';
import { CkptError, invalidArgument, isCkptError } from '../values/errors.js';
import type { JsonValue } from '../values/json.js';
import { describe } from '../values/validate.js';
import { type Codec, type CodecStep, stepOf, unreadable } from './codec.js';
import { decompress, isCompression } from './compress.js';
import { encryptionKeyOf } from './encrypt.js';

/** Where a value belongs: a checkpoint's data or transcript items in a session, or a state key. */
export type ValuePlace =
  | {
      session: string;
      part: 'data' | 'transcript';
      /** The checkpoint's seq where it is known (a read), for messages: a seq is not bound. */
      seq?: number;
    }
  | { scope: string; key: string };

/** A stored value read back: its JSON text, and the session an encryption proved it was written for. */
export interface OpenedValue {
  text: string;
  /**
   * For a checkpoint value that was encrypted: the session it was written for, which its
   * encryption authenticated (a fork holds values written for the session it came from).
   * Null for a value that was not encrypted, and for state values, whose place is bound whole.
   */
  sealedFor: string | null;
}

/** The associated data an encryption binds a value to: its place, with `owner` for its session. */
function boundPlace(place: ValuePlace, owner: string): string {
  return 'scope' in place
    ? JSON.stringify(['state', place.scope, place.key])
    : JSON.stringify(['checkpoint', place.part, owner]);
}

/** Encodes JSON text as a store keeps it, and reads it back; with no codecs, text stays text. */
export class CodecChain {
  readonly #steps: CodecStep[];
  readonly #encryption: CodecStep | undefined;

  constructor(codecs: unknown = []) {
    if (!Array.isArray(codecs)) {
      throw invalidArgument(
        'codecs',
        `codecs must be an array such as [compress('gzip'), encrypt({ keys, current })], got ${describe(codecs)}.`,
      );
    }
    this.#steps = codecs.map((codec, i) => {
      const step = stepOf(codec);
      if (step === undefined) {
        throw invalidArgument(
          `codecs[${i}]`,
          `codecs[${i}] is not a codec; make codecs with compress() or encrypt() from @ckpt/core.`,
        );
      }
      return step;
    });
    const names = (codecs as Codec[]).map((codec) => codec.name);
    const encryptAt = names.indexOf('aes-256-gcm');
    if (encryptAt !== -1 && names.lastIndexOf('aes-256-gcm') !== encryptAt) {
      throw invalidArgument(
        'codecs',
        'codecs holds encrypt() twice; give one with every key in keys.',
      );
    }
    if (encryptAt !== -1 && encryptAt < names.length - 1) {
      throw invalidArgument(
        'codecs',
        'codecs compresses after it encrypts, which cannot shrink anything; put compress() before encrypt().',
      );
    }
    this.#encryption = encryptAt === -1 ? undefined : this.#steps[encryptAt];
  }

  /** Whether the chain encrypts what it stores. */
  get encrypts(): boolean {
    return this.#encryption !== undefined;
  }

  /** The text to store for `text`, a value's JSON text at `place`. */
  encode(text: string, place: ValuePlace): string {
    if (this.#steps.length === 0) return text;
    const owner = 'scope' in place || !this.encrypts ? '' : place.session;
    const bound = boundPlace(place, owner);
    let bytes: Buffer = Buffer.from(text, 'utf8');
    const labels: string[] = [];
    for (const step of this.#steps) {
      const sealed = step.seal(bytes, bound);
      if (sealed === null) continue;
      bytes = sealed.bytes;
      labels.push(sealed.label);
    }
    if (labels.length === 0) return text;
    return `${MARKER}${labels.join(',')};${encodeURIComponent(owner)};${bytes.toString('base64')}`;
  }

  /** Read back a value stored at `place`; refuses with UNREADABLE what cannot be read. */
  decode(stored: string, place: ValuePlace): OpenedValue {
    if (!stored.startsWith(MARKER)) return { text: stored, sealedFor: null };
    const stepsEnd = stored.indexOf(';', MARKER.length);
    const ownerEnd = stepsEnd === -1 ? -1 : stored.indexOf(';', stepsEnd + 1);
    const owner = ownerEnd === -1 ? undefined : decodeOwner(stored.slice(stepsEnd + 1, ownerEnd));
    if (owner === undefined) {
      throw unreadable('damaged', `a stored value of ${describePlace(place)} is damaged.`);
    }
    const bound = boundPlace(place, owner);
    let bytes: Buffer = Buffer.from(stored.slice(ownerEnd + 1), 'base64');
    let encrypted = false;
    for (const label of stored.slice(MARKER.length, stepsEnd).split(',').reverse()) {
      if (isCompression(label)) {
        try {
          bytes = decompress(label, bytes);
        } catch (err) {
          throw placed(err, place);
        }
      } else if (encryptionKeyOf(label) !== undefined) {
        if (this.#encryption === undefined) {
          throw unreadable(
            'key',
            `a stored value of ${describePlace(place)} is encrypted (key ${JSON.stringify(encryptionKeyOf(label))}), and this store has no encrypt() codec; open it with codecs that hold the key.`,
            { key: encryptionKeyOf(label) },
          );
        }
        try {
          bytes = this.#encryption.open(bytes, label, bound);
        } catch (err) {
          throw placed(err, place);
        }
        encrypted = true;
      } else {
        throw unreadable(
          'codec',
          `a stored value of ${describePlace(place)} was made by codec ${JSON.stringify(label)}, which this version of @ckpt/core does not know.`,
          { codec: label },
        );
      }
    }
    return {
      text: bytes.toString('utf8'),
      sealedFor: encrypted && !('scope' in place) ? owner : null,
    };
  }
}

/**
 * What made a stored value: its codecs, keys and session (`ckpt1;gzip,aes-256-gcm:k2;s`), or
 * '' for a value stored as JSON text. Two values made alike have the same.
 */
export function madeBy(stored: string): string {
  if (!stored.startsWith(MARKER)) return '';
  return stored.slice(0, stored.lastIndexOf(';'));
}

/**
 * What each codec recorded of a stored value, in the order they ran (`['gzip', 'aes-256-gcm:k2']`),
 * or [] for a value stored as JSON text: for a tool that reports which codecs and keys a store's
 * values were made with, without reading them.
 */
export function codecLabelsOf(stored: string): string[] {
  if (!stored.startsWith(MARKER)) return [];
  const stepsEnd = stored.indexOf(';', MARKER.length);
  if (stepsEnd === -1) return [];
  return stored.slice(MARKER.length, stepsEnd).split(',');
}

function decodeOwner(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/**
 * The JSON value of `text`, a value read back from `place`; text that is not JSON (a value
 * damaged where it is stored) is refused with UNREADABLE, as a damaged encoding is.
 */
export function parseValue(text: string, place: ValuePlace): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw unreadable(
      'damaged',
      `a stored value of ${describePlace(place)} is damaged: it is not JSON.`,
    );
  }
}

function describePlace(place: ValuePlace): string {
  if ('scope' in place) {
    return `state key ${JSON.stringify(place.key)} of scope ${JSON.stringify(place.scope)}`;
  }
  const session = `session ${JSON.stringify(place.session)}`;
  return place.seq === undefined ? session : `checkpoint ${place.seq} of ${session}`;
}

/**
 * A codec's refusal (`a stored value is encrypted with key "k2", …`), which knows nothing of
 * where the value is, saying where: `a stored value of checkpoint 3 of session "s" is …`.
 */
function placed(err: unknown, place: ValuePlace): unknown {
  if (!isCkptError(err, 'UNREADABLE')) return err;
  const where = `a stored value of ${describePlace(place)}`;
  const message = err.message.startsWith('a stored value ')
    ? `${where} ${err.message.slice('a stored value '.length)}`
    : `${where}: ${err.message}`;
  return new CkptError('UNREADABLE', message, { details: err.details });
}
