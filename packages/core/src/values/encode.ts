/**
 * The value rules ("Rules and errors" in core's README): what may be saved, and its encoding as JSON text. Values are
 * checked before encoding so that a refusal names the exact path and nothing is written.
 */
import { CkptError, invalidArgument } from './errors.js';
import type { JsonValue, Metadata } from './json.js';

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
  /** How many long strings (see `LONG_STRING`) the walk has met so far. */
  longStrings: number;
  /** The copied arrays and objects that hold a long string at any depth. */
  holdingLong: Set<object>;
}

function pathOf(walk: Walk): string {
  let path = walk.root;
  for (const key of walk.keys)
    path = typeof key === 'number' ? `${path}[${key}]` : childPath(path, key);
  return path;
}

/**
 * Strings at least this long are quoted by `quote()` rather than by JSON.stringify. On Node 20,
 * JSON.stringify checks each character of a long string for escaping several times slower than
 * a regular expression scans it (core's README gives the figures); but for many small values
 * its per-value cost is lower than building the text piece by piece in JavaScript. So long
 * strings are quoted here, and every array or object that holds none is left whole to
 * JSON.stringify.
 */
const LONG_STRING = 64;

const NOT_A_LEAF = Symbol('not a leaf');

/**
 * A string, boolean, finite number or null as JSON reads it back (-0 as 0), or NOT_A_LEAF for
 * anything else. The loops below try it before they push the key of an item onto the path,
 * which only a refusal or a container needs: most values are leaves.
 */
function leaf(value: unknown, walk: Walk): JsonValue | typeof NOT_A_LEAF {
  switch (typeof value) {
    case 'string':
      if (value.length >= LONG_STRING) walk.longStrings++;
      return value;
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? (value === 0 ? 0 : value) : NOT_A_LEAF;
    default:
      return value === null ? null : NOT_A_LEAF;
  }
}

/**
 * Check `value` and return a plain copy of it as JSON reads it back: undefined properties
 * dropped, -0 as 0, every object and array new (strings are shared; they cannot change). The
 * copy is what gets encoded, so its text and the value `checkpoint()` returns agree even when a
 * getter would answer differently twice, and returning it spares a JSON.parse of the text.
 */
function copy(value: unknown, walk: Walk): JsonValue {
  const copied = leaf(value, walk);
  return copied === NOT_A_LEAF ? copyNonLeaf(value, walk) : copied;
}

/** `copy()` of what `leaf()` refused: refuses it, or copies an array or a plain object. */
function copyNonLeaf(value: unknown, walk: Walk): JsonValue {
  switch (typeof value) {
    case 'number':
      throw refuse(pathOf(walk), String(value));
    case 'undefined':
      throw refuse(pathOf(walk), 'undefined');
    case 'bigint':
      throw refuse(pathOf(walk), 'a bigint (store it as a string)');
    case 'symbol':
      throw refuse(pathOf(walk), 'a symbol');
    case 'function':
      throw refuse(pathOf(walk), 'a function');
  }
  const obj = value as object;
  const { keys, ancestors } = walk;
  if (ancestors.includes(obj)) throw refuse(pathOf(walk), 'a circular reference');
  ancestors.push(obj);
  const longStringsBefore = walk.longStrings;
  let out: JsonValue;
  if (Array.isArray(obj)) {
    // Filled by push, so that the copy is a packed array, which JSON.stringify writes faster.
    const items: JsonValue[] = [];
    for (let i = 0; i < obj.length; i++) {
      const item: unknown = obj[i];
      const copiedItem = leaf(item, walk);
      if (copiedItem !== NOT_A_LEAF) {
        items.push(copiedItem);
        continue;
      }
      keys.push(i);
      if (item === undefined && !(i in obj)) {
        throw refuse(pathOf(walk), 'a hole in an array (undefined)');
      }
      items.push(copyNonLeaf(item, walk));
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
      let field = leaf(item, walk);
      if (field === NOT_A_LEAF) {
        keys.push(key);
        field = copyNonLeaf(item, walk);
        keys.pop();
      }
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
  if (walk.longStrings !== longStringsBefore) walk.holdingLong.add(out);
  return out;
}

// In a well-formed string, JSON.stringify escapes the backslash, the quote and the control
// characters U+0000 to U+001F, of which text mostly holds \n, \r and \t. Searching for one
// character and replacing it everywhere are fast native scans; a regular expression with a
// function per match is not, and neither is JSON.stringify. The backslash comes first, so that
// the backslashes the other escapes add are not escaped again.
const COMMON_ESCAPES = [
  ['\\', '\\\\'],
  ['"', '\\"'],
  ['\n', '\\n'],
  ['\r', '\\r'],
  ['\t', '\\t'],
] as const;
// Anchored and negated, so the engine runs one tight loop instead of a search at each position.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const NO_CONTROL_CHARACTER = /^[^\u0000-\u001f]*$/;
// Replacing costs some 25 ns a match, so the scans above only pay off while fewer than about
// one character in 16 needs escaping; text denser than that (JSON held in a string, say) is
// left to JSON.stringify. Its first characters stand for the rest. Of the characters above,
// only the backslash needs escaping in a character class.
const COMMON_ESCAPE = new RegExp(
  `[${COMMON_ESCAPES.map(([char]) => (char === '\\' ? '\\\\' : char)).join('')}]`,
  'g',
);
const DENSITY_SAMPLE = 512;

function denseInEscapes(text: string): boolean {
  const sample = text.slice(0, DENSITY_SAMPLE);
  return (sample.match(COMMON_ESCAPE)?.length ?? 0) * 16 > sample.length;
}

/** `JSON.stringify(text)`, faster for long text. */
function quote(text: string): string {
  // Lone surrogates, which JSON.stringify writes as \udxxx, are left to it whole.
  if (text.length < LONG_STRING || !text.isWellFormed()) return JSON.stringify(text);
  let escaped = text;
  for (const [char, written] of COMMON_ESCAPES) {
    if (!escaped.includes(char)) continue;
    // Sampled once, before the first replacement.
    if (escaped === text && denseInEscapes(text)) return JSON.stringify(text);
    escaped = escaped.replaceAll(char, written);
  }
  // Any other control character, rare in text, is also left to JSON.stringify.
  return NO_CONTROL_CHARACTER.test(escaped) ? `"${escaped}"` : JSON.stringify(text);
}

/** `JSON.stringify(value)` of a checked copy; `holdingLong` is what its walk recorded. */
function textOf(value: JsonValue, holdingLong: Set<object>): string {
  if (typeof value === 'string') return quote(value);
  if (value === null || typeof value !== 'object' || !holdingLong.has(value)) {
    return JSON.stringify(value);
  }
  let text: string;
  if (Array.isArray(value)) {
    text = '[';
    for (let i = 0; i < value.length; i++) {
      text += `${i === 0 ? '' : ','}${textOf(value[i]!, holdingLong)}`;
    }
    text += ']';
  } else {
    text = '{';
    let first = true;
    for (const key of Object.keys(value)) {
      text += `${first ? '' : ','}${quote(key)}:${textOf(value[key]!, holdingLong)}`;
      first = false;
    }
    text += '}';
  }
  return text;
}

/** A checked value: its plain copy and that copy's JSON text. */
export interface Encoded<T extends JsonValue = JsonValue> {
  value: T;
  text: string;
}

/** Check a value against the JSON rules and encode it; `path` names it in errors. */
export function encodeJson(value: unknown, path: string): Encoded {
  const walk: Walk = {
    root: path,
    keys: [],
    ancestors: [],
    longStrings: 0,
    holdingLong: new Set(),
  };
  try {
    const checked = copy(value, walk);
    return {
      value: checked,
      text: walk.longStrings === 0 ? JSON.stringify(checked) : textOf(checked, walk.holdingLong),
    };
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    // Both the walk and the text can exceed what the engine allows: the stack, or the
    // longest string it can make.
    if (/string length/i.test(err.message)) {
      throw new CkptError(
        'PAYLOAD_TOO_LARGE',
        `${path} encodes to more text than JavaScript can hold in one string; store large blobs elsewhere and keep a reference.`,
        { details: { argument: path } },
      );
    }
    throw invalidArgument(path, `${path} is nested too deeply to encode.`);
  }
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

/**
 * Refuse with PAYLOAD_TOO_LARGE a checkpoint whose encoded data, metadata and transcript items
 * exceed `limit` bytes. Empty metadata and the brackets and commas of the items' array do not
 * count, so that a checkpoint at the limit takes the same room wherever it is written again.
 */
export function checkCheckpointSize(
  what: string,
  data: string,
  metadata: string,
  transcript: string,
  limit: number,
): void {
  const meta = metadata === '{}' ? '' : metadata;
  checkPayloadSize(
    what,
    data.length + meta.length + transcript.length,
    () =>
      encodedSize(data) +
      encodedSize(meta) +
      (transcript === '[]' ? 0 : encodedSize(transcript) - 2),
    limit,
    ' (data + metadata + transcript items)',
  );
}
