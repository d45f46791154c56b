/**
 * A chat's tags. A user's chat carries the tag `user` (the user id), so that the user's chat
 * list reads the store's tag index a page at a time, however many chats the store holds; the
 * application may give a chat tags of its own beside it. A store without tags
 * (`capabilities.tags` false) gives chats none, and a user's chats are listed by the prefix of
 * their ids alone, as before tags existed.
 */
import { type CheckpointStore, CkptError, MAX_TAG_VALUE_BYTES, MAX_TAGS } from '@ckpt/core';

/** Tags of a chat: a few string keys and values. */
export type ChatTags = Record<string, string>;

/** The key of the tag that holds a chat's user id. */
export const USER_TAG = 'user';

/**
 * The tags each chat of `userId` carries on `store`, or undefined for none: no user, a store
 * without tags, or a user id longer than a tag value may be (such a user's chats are listed by
 * prefix alone).
 */
export function userTagsOf(
  store: CheckpointStore,
  userId: string | undefined,
): ChatTags | undefined {
  if (userId === undefined || !store.capabilities.tags) return undefined;
  if (Buffer.byteLength(userId, 'utf8') > MAX_TAG_VALUE_BYTES) return undefined;
  return { [USER_TAG]: userId };
}

/** `current` with the tags of `wanted` added; undefined when it has them all already. */
export function missingTags(wanted: ChatTags | undefined, current: ChatTags): ChatTags | undefined {
  if (wanted === undefined) return undefined;
  if (Object.entries(wanted).every(([key, value]) => current[key] === value)) return undefined;
  return { ...current, ...wanted };
}

/**
 * The application's `tags` (a chat's, or a listing's `where`) with the user's tag added. A
 * `user` tag of another user is refused; anything but a plain object goes on unchanged, for the
 * store to refuse with its own words (a spread would make `{}` of it).
 */
export function withUserTags(
  tags: unknown,
  userId: string | undefined,
  userTags: ChatTags | undefined,
  argument: string,
): ChatTags {
  if (!isPlainObject(tags)) return tags as ChatTags;
  const given = tags as ChatTags;
  if (userId !== undefined && USER_TAG in given && given[USER_TAG] !== userId) {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `${argument}.${USER_TAG} is ${JSON.stringify(given[USER_TAG])}, but these are the chats of user ${JSON.stringify(userId)}: the ${USER_TAG} tag is the chat store's own.`,
      { details: { argument: `${argument}.${USER_TAG}` } },
    );
  }
  if (userTags === undefined) return given;
  const all = { ...given, ...userTags };
  if (Object.keys(all).length > MAX_TAGS) {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `${argument} has ${Object.keys(given).length} keys; a user's chat keeps its ${USER_TAG} tag beside at most ${MAX_TAGS - 1} of the application's.`,
      { details: { argument } },
    );
  }
  return all;
}

function isPlainObject(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
