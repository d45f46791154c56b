/**
 * The value rules of SPEC 3.1: what may be saved, and its encoding as JSON text. Values are
 * checked before encoding so that a refusal names the exact path and nothing is written.
 */
import { CkptError, invalidArgument } from './errors.js';
import type { JsonValue, Metadata } from './types.js';

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function childPath(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function refuse(path: string, what: string): CkptError {
  return invalidArgument(
    path,
    `${path} is ${what}, which JSON cannot carry exactly; store JSON values only (null, booleans, finite numbers, strings, arrays, plain objects).`,
  );
}

function kindOf(value: object): string {
  if (value instanceof Date) return 'a Date (store value.toISOString() or a number instead)';
  if (value instanceof Map) return 'a Map (store Object.fromEntries(map) instead)';
  if (value instanceof Set) return 'a Set (store an array instead)';
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return 'binary data';
  const name = (value as { constructor?: { name?: string } }).constructor?.name;
  return name ? `an instance of ${name}` : 'an object with a custom prototype';
}

/**
 * Where the walk is: the keys from the root down. The path text is only built for an error,
 * so that checking a large value costs no string building per element.
 */
interface Walk {
  root: string;
  keys: (string | number)[];
  ancestors: object[];
}

function pathOf(walk: Walk): string {
  let path = walk.root;
  for (const key of walk.keys)
    path = typeof key === 'number' ? `${path}[${key}]` : childPath(path, key);
  return path;
}

/**
 * Check `value` and return a plain copy of it as JSON reads it back: undefined properties
 * dropped, -0 as 0, every object and array new (strings are shared; they cannot change). The
 * copy is what gets encoded, so its text and the value `checkpoint()` returns agree even when a
 * getter would answer differently twice, and returning it spares a JSON.parse of the text.
 */
function copy(value: unknown, walk: Walk): JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw refuse(pathOf(walk), String(value));
      return value === 0 ? 0 : value;
    case 'undefined':
      throw refuse(pathOf(walk), 'undefined');
    case 'bigint':
      throw refuse(pathOf(walk), 'a bigint (store it as a string)');
    case 'symbol':
      throw refuse(pathOf(walk), 'a symbol');
    case 'function':
      throw refuse(pathOf(walk), 'a function');
  }
  if (value === null) return null;
  const obj = value as object;
  const { keys, ancestors } = walk;
  if (ancestors.includes(obj)) throw refuse(pathOf(walk), 'a circular reference');
  ancestors.push(obj);
  let out: JsonValue;
  if (Array.isArray(obj)) {
    const items: JsonValue[] = new Array(obj.length);
    for (let i = 0; i < obj.length; i++) {
      keys.push(i);
      if (!(i in obj)) throw refuse(pathOf(walk), 'a hole in an array (undefined)');
      items[i] = copy(obj[i], walk);
      keys.pop();
    }
    out = items;
  } else {
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) throw refuse(pathOf(walk), kindOf(obj));
    if (Object.getOwnPropertySymbols(obj).length > 0) {
      throw refuse(pathOf(walk), 'keyed by a symbol');
    }
    const fields: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(obj)) {
      const item = (obj as Record<string, unknown>)[key];
      // Dropped on encoding, as JSON.stringify does.
      if (item === undefined) continue;
      keys.push(key);
      const field = copy(item, walk);
      keys.pop();
      // Assigning "__proto__" would set the copy's prototype; define it as data, as JSON.parse does.
      if (key === '__proto__') {
        Object.defineProperty(fields, key, {
          value: field,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else {
        fields[key] = field;
      }
    }
    out = fields;
  }
  ancestors.pop();
  return out;
}

/** A checked value: its plain copy and that copy's JSON text. */
export interface Encoded<T extends JsonValue = JsonValue> {
  value: T;
  text: string;
}

/** Check a value against the JSON rules and encode it; `path` names it in errors. */
export function encodeJson(value: unknown, path: string): Encoded {
  let checked: JsonValue;
  try {
    checked = copy(value, { root: path, keys: [], ancestors: [] });
  } catch (err) {
    if (err instanceof RangeError) {
      throw invalidArgument(path, `${path} is nested too deeply to encode.`);
    }
    throw err;
  }
  return { value: checked, text: JSON.stringify(checked) };
}

/** Check and encode a metadata object (a plain object, not an array). */
export function encodeMetadata(value: unknown, path: string): Encoded<Metadata> {
  if (value === undefined) return { value: {}, text: '{}' };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(path, `${path} must be a plain object of JSON values.`);
  }
  return encodeJson(value, path) as Encoded<Metadata>;
}

/** Check and encode transcript items, as one JSON array. */
export function encodeTranscript(value: unknown, path: string): Encoded<JsonValue[]> {
  if (value === undefined) return { value: [], text: '[]' };
  if (!Array.isArray(value)) {
    throw invalidArgument(path, `${path} must be an array of JSON values.`);
  }
  return encodeJson(value, path) as Encoded<JsonValue[]>;
}

/** Decode JSON text written by `encodeJson`. */
export function decodeJson(text: string): JsonValue {
  return JSON.parse(text) as JsonValue;
}

/** Decode metadata text. */
export function decodeMetadata(text: string): Metadata {
  return JSON.parse(text) as Metadata;
}

/** Size in bytes of encoded text as stored (UTF-8). */
export function encodedSize(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Refuse with PAYLOAD_TOO_LARGE what encodes to more than `limit` UTF-8 bytes. `units` is its
 * length in UTF-16 units and `measure` counts its bytes: a unit is at most 3 bytes, so text
 * that short is never measured (counting the bytes of a large payload is not free). `counted`
 * says, in the message, what the size adds up.
 */
export function checkPayloadSize(
  what: string,
  units: number,
  measure: () => number,
  limit: number,
  counted = '',
): void {
  if (units * 3 <= limit) return;
  const size = measure();
  if (size > limit) {
    throw new CkptError(
      'PAYLOAD_TOO_LARGE',
      `${what} is ${size} bytes encoded${counted}; the limit is ${limit}. Store large blobs elsewhere and keep a reference, or raise maxPayloadBytes.`,
      { details: { size, limit } },
    );
  }
}
