/**
 * The value rules of SPEC 3.1: what may be saved, and its encoding as JSON text. Values are
 * checked before encoding so that a refusal names the exact path and nothing is written.
 */
import { type CkptError, invalidArgument } from './errors.js';
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

function check(value: unknown, walk: Walk): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw refuse(pathOf(walk), String(value));
      return;
    case 'undefined':
      throw refuse(pathOf(walk), 'undefined');
    case 'bigint':
      throw refuse(pathOf(walk), 'a bigint (store it as a string)');
    case 'symbol':
      throw refuse(pathOf(walk), 'a symbol');
    case 'function':
      throw refuse(pathOf(walk), 'a function');
  }
  if (value === null) return;
  const obj = value as object;
  const { keys, ancestors } = walk;
  if (ancestors.includes(obj)) throw refuse(pathOf(walk), 'a circular reference');
  ancestors.push(obj);
  if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length; i++) {
      keys.push(i);
      if (!(i in obj)) throw refuse(pathOf(walk), 'a hole in an array (undefined)');
      check(obj[i], walk);
      keys.pop();
    }
  } else {
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) throw refuse(pathOf(walk), kindOf(obj));
    if (Object.getOwnPropertySymbols(obj).length > 0) {
      throw refuse(pathOf(walk), 'keyed by a symbol');
    }
    for (const key of Object.keys(obj)) {
      const item = (obj as Record<string, unknown>)[key];
      // Dropped on encoding, as JSON.stringify does.
      if (item !== undefined) {
        keys.push(key);
        check(item, walk);
        keys.pop();
      }
    }
  }
  ancestors.pop();
}

/** Check a value against the JSON rules and encode it; `path` names it in errors. */
export function encodeJson(value: unknown, path: string): string {
  try {
    check(value, { root: path, keys: [], ancestors: [] });
  } catch (err) {
    if (err instanceof RangeError) {
      throw invalidArgument(path, `${path} is nested too deeply to encode.`);
    }
    throw err;
  }
  return JSON.stringify(value);
}

/** Check and encode a metadata object (a plain object, not an array). */
export function encodeMetadata(value: unknown, path: string): string {
  if (value === undefined) return '{}';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(path, `${path} must be a plain object of JSON values.`);
  }
  return encodeJson(value, path);
}

/** Check and encode transcript items; returns the JSON text of the array and each item's size. */
export function encodeTranscript(value: unknown, path: string): string {
  if (value === undefined) return '[]';
  if (!Array.isArray(value)) {
    throw invalidArgument(path, `${path} must be an array of JSON values.`);
  }
  return encodeJson(value, path);
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
