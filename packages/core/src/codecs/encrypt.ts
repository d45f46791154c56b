/**
 * `encrypt()`: AES-256-GCM from node:crypto, with named keys. Each value is sealed under the
 * current key with a fresh random 12-byte nonce, and its place (the session or the state key it
 * belongs to) as associated data, so that a value moved to another place fails to open. What is
 * stored is the nonce, the ciphertext and the 16-byte tag.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { invalidArgument } from '../values/errors.js';
import { checkOptions, describe } from '../values/validate.js';
import { type Codec, makeCodec, unreadable } from './codec.js';

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Nonces are cut from a pool of random bytes filled 4 KiB at a time: one call to the system's
 * generator costs more than sealing a small value, and each slice is handed out once.
 */
const NONCE_POOL_BYTES = NONCE_BYTES * 341;
let noncePool = Buffer.alloc(0);
let noncePoolAt = 0;

function freshNonce(): Buffer {
  if (noncePoolAt + NONCE_BYTES > noncePool.length) {
    noncePool = randomBytes(NONCE_POOL_BYTES);
    noncePoolAt = 0;
  }
  const nonce = noncePool.subarray(noncePoolAt, noncePoolAt + NONCE_BYTES);
  noncePoolAt += NONCE_BYTES;
  return nonce;
}

/** What a key's name may be: it is stored beside every value the key sealed. */
const KEY_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The options of `encrypt()`: the keys by name, and the name of the one that seals new values. */
export interface EncryptOptions {
  keys: Record<string, Uint8Array>;
  current: string;
}

/** Whether `label` names an encryption, and with which key. */
export function encryptionKeyOf(label: string): string | undefined {
  return label.startsWith(`${ALGORITHM}:`) ? label.slice(ALGORITHM.length + 1) : undefined;
}

/**
 * A codec that encrypts values with AES-256-GCM under `keys[current]`; values sealed under any
 * key of `keys` read. Keys are 32 bytes; names are 1 to 64 letters, digits, `_`, `.` or `-`.
 */
export function encrypt(options: EncryptOptions): Codec {
  const opts = checkOptions(options, 'options', ['keys', 'current'], 'encrypt()');
  const keys = checkKeys(opts.keys);
  const current = opts.current;
  if (typeof current !== 'string' || !keys.has(current)) {
    throw invalidArgument(
      'current',
      `encrypt(): current must name one of the keys (${[...keys.keys()].join(', ')}), got ${describe(current)}.`,
    );
  }
  const sealing = keys.get(current) as Buffer;
  const label = `${ALGORITHM}:${current}`;
  return makeCodec(ALGORITHM, {
    seal(bytes, place) {
      const nonce = freshNonce();
      const cipher = createCipheriv(ALGORITHM, sealing, nonce);
      cipher.setAAD(Buffer.from(place, 'utf8'));
      const sealed = Buffer.concat([
        nonce,
        cipher.update(bytes),
        cipher.final(),
        cipher.getAuthTag(),
      ]);
      return { bytes: sealed, label };
    },
    open(bytes, stepLabel, place) {
      const name = encryptionKeyOf(stepLabel) as string;
      const key = keys.get(name);
      if (key === undefined) {
        throw unreadable(
          'key',
          `a stored value is encrypted with key ${JSON.stringify(name)}, which this store's encrypt() does not have; add it to keys.`,
          { key: name },
        );
      }
      if (bytes.length < NONCE_BYTES + TAG_BYTES) {
        throw unreadable(
          'damaged',
          `a stored value encrypted with key ${JSON.stringify(name)} is damaged: it is shorter than its nonce and tag.`,
          { key: name },
        );
      }
      const decipher = createDecipheriv(ALGORITHM, key, bytes.subarray(0, NONCE_BYTES));
      decipher.setAAD(Buffer.from(place, 'utf8'));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      try {
        return Buffer.concat([
          decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)),
          decipher.final(),
        ]);
      } catch {
        throw failed(name);
      }
    },
  });
}

function failed(name: string) {
  return unreadable(
    'authentication',
    `a stored value encrypted with key ${JSON.stringify(name)} failed authentication: the key given under that name is not the one that sealed it, or the value was changed, or moved from another session or state key, after it was written.`,
    { key: name },
  );
}

/** The keys by name, each copied (so that changing the caller's array changes nothing here). */
function checkKeys(given: unknown): Map<string, Buffer> {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw invalidArgument(
      'keys',
      `encrypt() needs keys, an object of named 32-byte keys ({ k1: key }), got ${describe(given)}.`,
    );
  }
  const keys = new Map<string, Buffer>();
  for (const [name, key] of Object.entries(given)) {
    if (!KEY_NAME.test(name)) {
      throw invalidArgument(
        'keys',
        `encrypt(): key name ${JSON.stringify(name)} must be 1 to 64 letters, digits, '_', '.' or '-'.`,
      );
    }
    // Only the key's length is ever told, never its bytes.
    if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) {
      const what = key instanceof Uint8Array ? `${key.length} bytes` : 'not a Buffer or Uint8Array';
      throw invalidArgument(
        `keys.${name}`,
        `encrypt(): key ${JSON.stringify(name)} must be a Buffer or Uint8Array of 32 bytes (such as crypto.randomBytes(32)); it is ${what}.`,
      );
    }
    keys.set(name, Buffer.from(key));
  }
  if (keys.size === 0) {
    throw invalidArgument('keys', 'encrypt() needs at least one key in keys.');
  }
  return keys;
}
