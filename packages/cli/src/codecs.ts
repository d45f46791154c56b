/**
 * The codecs a command opens stores with: `--compress <kind>` (or CKPT_COMPRESS), and the keys of
 * an encryption from CKPT_KEYS or a key file (`--key-file`, or CKPT_KEY_FILE), never from an
 * argument, which any user of the machine can read in the list of processes. The first key
 * named seals new values, unless `--current-key` (or CKPT_KEY_CURRENT) names another.
 */
import { readFileSync } from 'node:fs';
import * as zlib from 'node:zlib';
import { type Codec, type CompressionKind, compress, encrypt, isCkptError } from '@ckpt/core';
import type { CliIo } from './io.js';
import { UsageError } from './usage-error.js';

/** What `--compress` takes: a compression of node:zlib, or none. */
export const COMPRESSIONS = ['gzip', 'deflate', 'brotli', 'zstd', 'none'] as const;

/** The codec options every command takes, as parsed. */
export interface CodecOptions {
  compress?: (typeof COMPRESSIONS)[number];
  keyFile?: string;
  currentKey?: string;
}

// Standard base64 or base64url, padded or not: a 32-byte key is 43 or 44 characters.
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
// What encrypt() takes as a key's name. A message names a key only when its name is one: text
// before an `=` that is not (such as a key's own base64, padding and all) is never shown.
const KEY_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const KEY_FORMAT =
  'give each key as name=<32 bytes in base64>, one a line or separated by commas (k2=<base64>,k1=<base64>), such as k1=$(openssl rand -base64 32)';

/** What to add when `text` holds `;` or spaces between its keys: how they are separated. */
function separatorHint(text: string): string {
  return /[;\s]/.test(text) ? '; entries are separated by commas: name=base64,name=base64' : '';
}

/**
 * The keys of `text`: `name=<base64 of 32 bytes>` entries, separated by commas or lines; blank
 * lines and lines starting with `#` are skipped. `from` says where they came from, for messages,
 * which name a key and never show its bytes.
 */
export function parseKeys(text: string, from: string): Map<string, Buffer> {
  const keys = new Map<string, Buffer>();
  const entries = text
    .split(/[\n,]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '' && !entry.startsWith('#'));
  for (const [i, entry] of entries.entries()) {
    const at = entry.indexOf('=');
    const name = at === -1 ? '' : entry.slice(0, at).trim();
    const encoded = at === -1 ? '' : entry.slice(at + 1).trim();
    if (name === '' || encoded === '' || !KEY_NAME.test(name)) {
      throw new UsageError(
        `${from}: entry ${i + 1} is not name=<base64 key>${separatorHint(entry)}; give each key as k1=<32 bytes in base64>, such as the output of: openssl rand -base64 32.`,
      );
    }
    if (keys.has(name))
      throw new UsageError(`${from}: key ${JSON.stringify(name)} is given twice.`);
    if (!BASE64.test(encoded)) {
      throw new UsageError(
        `${from}: key ${JSON.stringify(name)} is not base64${separatorHint(encoded)}; make a key with: openssl rand -base64 32.`,
      );
    }
    const key = Buffer.from(
      encoded,
      encoded.includes('-') || encoded.includes('_') ? 'base64url' : 'base64',
    );
    if (key.length !== 32) {
      throw new UsageError(
        `${from}: key ${JSON.stringify(name)} is ${key.length} bytes, and a key is 32; make one with: openssl rand -base64 32.`,
      );
    }
    keys.set(name, key);
  }
  // Keys that are not there would leave every value written in the clear, unasked.
  if (keys.size === 0) throw new UsageError(`${from} holds no key; ${KEY_FORMAT}.`);
  return keys;
}

/**
 * Whether `text` reads as key entries (`name=…`) rather than a path: keys given in place of a
 * key file's path, which the command must neither use nor show.
 */
function looksLikeKeys(text: string): boolean {
  const at = text.indexOf('=');
  return at > 0 && KEY_NAME.test(text.slice(0, at).trim());
}

/** The key file given (`--key-file`, else CKPT_KEY_FILE), or undefined for none. */
export function keyFileOf(io: CliIo, options: CodecOptions): string | undefined {
  return options.keyFile ?? (io.env.CKPT_KEY_FILE || undefined);
}

/** The keys the environment or a key file gives, or null for none. */
function givenKeys(io: CliIo, options: CodecOptions): Map<string, Buffer> | null {
  const env = io.env.CKPT_KEYS;
  const file = keyFileOf(io, options);
  if (env && file !== undefined) {
    throw new UsageError(
      'both CKPT_KEYS and a key file are given; keep the keys in one place: unset CKPT_KEYS, or give no --key-file (or CKPT_KEY_FILE).',
    );
  }
  if (env) return parseKeys(env, 'CKPT_KEYS');
  if (file === undefined) return null;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (looksLikeKeys(file)) {
      throw new UsageError(
        `--key-file (or CKPT_KEY_FILE) takes the path of a file, and what was given is no file but looks like keys (name=…), which are not shown; keys go in CKPT_KEYS or in that file, never on the command line, where any user of the machine can read them in the list of processes.`,
      );
    }
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new UsageError(`cannot read the key file ${file} (${why}).`);
  }
  return parseKeys(text, `key file ${file}`);
}

/** The codecs a command opens stores with, and the name of the key that seals (if any). */
export interface StoreCodecs {
  codecs: Codec[];
  currentKey: string | undefined;
  /** The names of the keys given (never their bytes), [] for none. */
  keyNames: string[];
}

/** The codecs the options and the environment give: compression, then encryption; [] for none. */
export function storeCodecs(io: CliIo, options: CodecOptions): StoreCodecs {
  const kind = options.compress ?? (io.env.CKPT_COMPRESS || 'none');
  if (!(COMPRESSIONS as readonly string[]).includes(kind)) {
    throw new UsageError(
      `CKPT_COMPRESS must be one of ${COMPRESSIONS.join(', ')}, got ${JSON.stringify(kind)}.`,
    );
  }
  if (kind === 'zstd' && !('zstdCompressSync' in zlib)) {
    throw new UsageError(
      `zstd compression needs Node 22.15 or later, and this is Node ${process.version}; compress with gzip, deflate or brotli.`,
    );
  }
  const codecs: Codec[] = kind === 'none' ? [] : [compress(kind as CompressionKind)];
  const keys = givenKeys(io, options);
  const current = options.currentKey ?? (io.env.CKPT_KEY_CURRENT || undefined);
  if (keys === null || keys.size === 0) {
    if (current !== undefined) {
      throw new UsageError(
        `a current key (${JSON.stringify(current)}) is named, but no keys are given: set CKPT_KEYS or give --key-file.`,
      );
    }
    return { codecs, currentKey: undefined, keyNames: [] };
  }
  const currentKey = current ?? [...keys.keys()][0]!;
  if (!keys.has(currentKey)) {
    throw new UsageError(
      `the current key ${JSON.stringify(currentKey)} is not among the keys given (${[...keys.keys()].join(', ')}); name one of them with --current-key or CKPT_KEY_CURRENT.`,
    );
  }
  codecs.push(encrypt({ keys: Object.fromEntries(keys), current: currentKey }));
  return { codecs, currentKey, keyNames: [...keys.keys()] };
}

// How core ends a message on a value sealed under a key its codecs lack: advice to code.
const CORE_KEY_ADVICE =
  /,? (and this store has no encrypt\(\) codec|which this store's encrypt\(\) does not have).*$/s;

/**
 * For an error on a value sealed under a key the command was not given (`keyNames` are the
 * names of those it was), its message in the command's words, ending with `advice` on where the
 * key goes; null for any other error. Core speaks to code, which holds codecs; a person running
 * ckpt holds keys.
 */
export function missingKeyMessage(
  err: unknown,
  keyNames: () => string[],
  advice: string,
): string | null {
  if (!isCkptError(err, 'UNREADABLE') || err.details.reason !== 'key') return null;
  const names = keyNames();
  const what = err.message.replace(CORE_KEY_ADVICE, '').replace(/\.$/, '');
  const given =
    names.length === 0
      ? 'and no keys were given'
      : `not among the keys given (${names.join(', ')})`;
  return `${what}, ${given}; ${advice}`;
}
