/** The rules for tags ("Tags" in core's README): few and small, so that every backend indexes them. */
import { invalidArgument } from './errors.js';
import { checkStorableText, describe } from './validate.js';

/** Most tags a session has, and most pairs a `where` names. */
export const MAX_TAGS = 16;
/** Longest tag key, in characters (all ASCII). */
export const MAX_TAG_KEY_LENGTH = 64;
/** Longest tag value, in bytes of UTF-8. */
export const MAX_TAG_VALUE_BYTES = 256;

const TAG_KEY = /^[A-Za-z0-9_.:-]+$/;

/**
 * A session's tags: a few string keys and values (see checkTags), keys in ascending order of
 * their code points. The store checks them before a backend sees them.
 */
export type Tags = Readonly<Record<string, string>>;

/**
 * Tags as given (`argument` names them in messages): a plain object of at most MAX_TAGS keys,
 * each 1 to 64 of the characters A-Z a-z 0-9 _ . : -, each value a string of at most 256 bytes
 * of UTF-8, without NUL or a lone surrogate. Returns a copy with its keys in ascending order, so
 * that equal tags are equal text, or with `order: 'given'` in the order given (a `where`, whose
 * first pair is the one a backend walks the index of).
 */
export function checkTags(
  value: unknown,
  argument: string,
  order: 'ascending' | 'given' = 'ascending',
): Tags {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(
      argument,
      `${argument} must be an object of string keys and values, such as { user: 'ann' }, got ${describe(value)}.`,
    );
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    throw invalidArgument(argument, `${argument} must be a plain object, got ${describe(value)}.`);
  }
  const keys = order === 'given' ? Object.keys(value) : Object.keys(value).sort();
  if (keys.length > MAX_TAGS) {
    throw invalidArgument(
      argument,
      `${argument} has ${keys.length} keys; a session has at most ${MAX_TAGS} tags.`,
    );
  }
  const tags: Record<string, string> = {};
  for (const key of keys) {
    checkTagKey(key, argument);
    tags[key] = checkTagValue((value as Record<string, unknown>)[key], `${argument}.${key}`);
  }
  return tags;
}

function checkTagKey(key: string, argument: string): void {
  if (key.length > MAX_TAG_KEY_LENGTH || !TAG_KEY.test(key)) {
    throw invalidArgument(
      argument,
      `${argument} has the key ${JSON.stringify(key)}; a tag key is 1 to ${MAX_TAG_KEY_LENGTH} of the characters A-Z a-z 0-9 _ . : -.`,
    );
  }
}

function checkTagValue(value: unknown, argument: string): string {
  if (typeof value !== 'string') {
    throw invalidArgument(argument, `${argument} must be a string, got ${describe(value)}.`);
  }
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_TAG_VALUE_BYTES) {
    throw invalidArgument(
      argument,
      `${argument} is ${bytes} bytes of UTF-8; a tag value is at most ${MAX_TAG_VALUE_BYTES}.`,
    );
  }
  return checkStorableText(value, argument);
}

/** Whether `tags` has every pair of `where`. */
export function tagsMatch(tags: Tags | undefined, where: Tags): boolean {
  for (const [key, value] of Object.entries(where)) {
    if (tags?.[key] !== value) return false;
  }
  return true;
}
