/**
 * Tags as words, `key=value` (`ckpt sessions --where`, `ckpt tag`, the studio's `where`
 * parameter), checked by the rules core applies ("Finding sessions by tag" in its README) as
 * they are read, so that a typo is refused before any store is opened; and tags as one line
 * for a person.
 */
import { MAX_TAG_KEY_LENGTH, MAX_TAG_VALUE_BYTES, MAX_TAGS } from '@ckpt/core';
import { tagPair } from '@ckpt/studio-app/wire';

/** Tags, keys as given. */
export type Tags = Record<string, string>;

/** Why a tag given as a word cannot be taken; the message says it for a person. */
export class BadTag extends Error {}

/** The characters of a key, as core's `checkTags` takes them. */
const TAG_KEY = /^[A-Za-z0-9_.:-]+$/;

/** `key`, or BadTag when core would refuse it as a tag's key. */
export function tagKey(key: string): string {
  if (key.length > MAX_TAG_KEY_LENGTH || !TAG_KEY.test(key)) {
    throw new BadTag(
      `a tag key is 1 to ${MAX_TAG_KEY_LENGTH} of the characters A-Z a-z 0-9 _ . : -, got ${JSON.stringify(key)}.`,
    );
  }
  return key;
}

/**
 * `tags` and the tag `text` (`key=value`) names, or BadTag: no `=`, a bad key, a key given
 * before (a session has one value a key, so a second is a slip), a value too long or holding
 * NUL, or one tag too many.
 */
export function withTag(tags: Tags, text: string): Tags {
  const pair = tagPair(text);
  if (pair === null) {
    throw new BadTag(`a tag is key=value, such as user=ann, got ${JSON.stringify(text)}.`);
  }
  const [key, value] = pair;
  tagKey(key);
  if (Object.hasOwn(tags, key)) {
    throw new BadTag(
      `the key ${JSON.stringify(key)} is given twice (${key}=${tags[key]} and ${text}); a session has one value a key.`,
    );
  }
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_TAG_VALUE_BYTES) {
    throw new BadTag(
      `the value of ${JSON.stringify(key)} is ${bytes} bytes of UTF-8; a tag value is at most ${MAX_TAG_VALUE_BYTES}.`,
    );
  }
  // Only the studio's API can be given one: no command-line argument holds a NUL.
  if (value.includes('\0')) {
    throw new BadTag(
      `the value of ${JSON.stringify(key)} holds a NUL character (\\0), which no tag may.`,
    );
  }
  if (Object.keys(tags).length >= MAX_TAGS) {
    throw new BadTag(`more than ${MAX_TAGS} tags are given; a session has at most ${MAX_TAGS}.`);
  }
  return { ...tags, [key]: value };
}

/** The tags `texts` name, each checked as `withTag` checks it. */
export function tagsOf(texts: Iterable<string>): Tags {
  let tags: Tags = {};
  for (const text of texts) tags = withTag(tags, text);
  return tags;
}

/** The words that give `tags` back: `key=value` each. */
export const tagWords = (tags: Tags): string[] =>
  Object.entries(tags).map(([key, value]) => `${key}=${value}`);

/**
 * `tags` on one line, `status=open user=ann`, keys ascending; a value that is empty or holds
 * a space, a quote or a control character in JSON quotes (`note="on hold"`), so that where one
 * tag ends shows.
 */
export function tagsLine(tags: Tags): string {
  return Object.keys(tags)
    .sort()
    .map((key) => {
      const value = tags[key]!;
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are quoted
      const plain = value !== '' && !/[\s"'\u0000-\u001f\u007f]/.test(value);
      return `${key}=${plain ? value : JSON.stringify(value)}`;
    })
    .join(' ');
}

/** `tags` as `tagsLine` writes them, or `no tags`. */
export const tagsOrNone = (tags: Tags): string =>
  Object.keys(tags).length === 0 ? 'no tags' : tagsLine(tags);

/** Whether `a` and `b` are the same tags. */
export function sameTags(a: Tags, b: Tags): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => b[k] === a[k]);
}

/** A `,` or a space, then what reads as another tag's `key=`. */
const ANOTHER_TAG = /(?:,\s*|\s+)(?=[A-Za-z0-9_.:-]+=)/;

/**
 * For a `where` that found nothing: the first pair whose value reads as several tags run
 * together (`user=ann,status=open`, or `'user=ann status=open'` as one word), with the tags it
 * may have meant (`user=ann`, `status=open`); null when none does. A value may hold a comma,
 * so this is only a hint.
 */
export function tagsRunTogether(
  where: Tags,
): { key: string; value: string; meant: string[] } | null {
  for (const [key, value] of Object.entries(where)) {
    const parts = value.split(ANOTHER_TAG);
    if (parts.length > 1) return { key, value, meant: [`${key}=${parts[0]}`, ...parts.slice(1)] };
  }
  return null;
}
