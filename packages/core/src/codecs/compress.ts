/** `compress()`: the compression codecs, from node:zlib. */
import { constants } from 'node:buffer';
import * as zlib from 'node:zlib';
import { CkptError, invalidArgument } from '../values/errors.js';
import { checkOptions, describe } from '../values/validate.js';
import { type Codec, makeCodec, unreadable } from './codec.js';

/** The compressions `compress()` offers. */
export type CompressionKind = 'gzip' | 'deflate' | 'brotli' | 'zstd';

/** Values shorter than this many bytes are stored as they are, unless `minBytes` says otherwise. */
export const DEFAULT_MIN_BYTES = 256;

interface Compression {
  pack(bytes: Buffer): Buffer;
  unpack(bytes: Buffer): Buffer;
}

// zstd is in node:zlib from Node 22.15 and 23.8 on; the types of older Nodes do not name it.
const zstd = zlib as unknown as {
  zstdCompressSync?: (bytes: Buffer) => Buffer;
  zstdDecompressSync?: (bytes: Buffer, options: typeof UNPACKED) => Buffer;
};

// Brotli's default quality (11) is for files compressed once and read many times; a checkpoint
// is written as often as it is read, and quality 5 keeps most of the ratio at a fraction of the time.
const BROTLI = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } };

// A value is read back into one string, so no more than a string can hold is ever unpacked:
// a changed value that would unpack to gigabytes fails as damaged instead of filling memory.
const UNPACKED = { maxOutputLength: constants.MAX_STRING_LENGTH };

const COMPRESSIONS: Record<CompressionKind, Compression | undefined> = {
  gzip: { pack: (b) => zlib.gzipSync(b), unpack: (b) => zlib.gunzipSync(b, UNPACKED) },
  deflate: { pack: (b) => zlib.deflateSync(b), unpack: (b) => zlib.inflateSync(b, UNPACKED) },
  brotli: {
    pack: (b) => zlib.brotliCompressSync(b, BROTLI),
    unpack: (b) => zlib.brotliDecompressSync(b, UNPACKED),
  },
  zstd:
    zstd.zstdCompressSync && zstd.zstdDecompressSync
      ? {
          pack: (b) => zstd.zstdCompressSync!(b),
          unpack: (b) => zstd.zstdDecompressSync!(b, UNPACKED),
        }
      : undefined,
};

function isKind(kind: unknown): kind is CompressionKind {
  return typeof kind === 'string' && Object.hasOwn(COMPRESSIONS, kind);
}

/**
 * A codec that compresses values of at least `minBytes` (default 256) UTF-8 bytes of JSON text;
 * shorter ones, and any that compression would not make smaller, are stored as they are.
 */
export function compress(kind: CompressionKind, options?: { minBytes?: number }): Codec {
  if (!isKind(kind)) {
    throw invalidArgument(
      'kind',
      `compress() takes 'gzip', 'deflate', 'brotli' or 'zstd', got ${describe(kind)}.`,
    );
  }
  const compression = COMPRESSIONS[kind];
  if (compression === undefined) {
    throw new CkptError(
      'UNSUPPORTED',
      `compress('${kind}'): this Node (${process.version}) has no ${kind} in node:zlib (it came in Node 22.15 and 23.8); use 'gzip', 'deflate' or 'brotli'.`,
      { details: { capability: kind } },
    );
  }
  const opts = checkOptions(options, 'options', ['minBytes'], 'compress()');
  const minBytes = opts.minBytes ?? DEFAULT_MIN_BYTES;
  if (!Number.isSafeInteger(minBytes) || minBytes < 0) {
    throw invalidArgument(
      'minBytes',
      `minBytes must be an integer from 0, got ${describe(opts.minBytes)}.`,
    );
  }
  return makeCodec(kind, {
    seal(bytes) {
      if (bytes.length < minBytes) return null;
      const packed = compression.pack(bytes);
      return packed.length < bytes.length ? { bytes: packed, label: kind } : null;
    },
    open: (bytes) => decompress(kind, bytes),
  });
}

/** Whether `label` names a compression: those read without being configured. */
export function isCompression(label: string): label is CompressionKind {
  return isKind(label);
}

/** Undo compression `kind`; what it made needs no options to be read. */
export function decompress(kind: CompressionKind, bytes: Buffer): Buffer {
  const compression = COMPRESSIONS[kind];
  if (compression === undefined) {
    throw unreadable(
      'codec',
      `a stored value is compressed with ${kind}, which this Node (${process.version}) does not have; read it with Node 22.15 or later.`,
      { codec: kind },
    );
  }
  try {
    return compression.unpack(bytes);
  } catch {
    throw unreadable('damaged', `a stored value compressed with ${kind} is damaged.`, {
      codec: kind,
    });
  }
}
