/**
 * Which ckpt session holds a chat. With a user id, `${userId}/${chatId}`, so that one prefix
 * holds one user's chats (listed by it on a store without tags; beside the `user` tag on one
 * with them, so that other sessions tagged with the user are not taken for chats); without
 * one, the chat id itself. A user id holds no `/`, so that no user's prefix reaches into
 * another user's chats.
 */
import { CkptError } from '@ckpt/core';

/** The longest session id ckpt takes, in code points. */
const MAX_ID = 255;

/** `userId`, checked: a non-empty string without `/`. */
export function checkUserId(userId: unknown): string {
  if (typeof userId !== 'string' || userId === '' || userId.includes('/')) {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `userId must be a non-empty string without "/", got ${JSON.stringify(userId)}; "/" separates the user from the chat in the session id.`,
      { details: { argument: 'userId' } },
    );
  }
  return userId;
}

/** The session id of `chatId`, for `userId` when there is one. */
export function sessionIdOf(userId: string | undefined, chatId: unknown): string {
  if (typeof chatId !== 'string' || chatId === '') {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `chatId must be a non-empty string, got ${JSON.stringify(chatId)}.`,
      { details: { argument: 'chatId' } },
    );
  }
  const sessionId = userId === undefined ? chatId : `${userId}/${chatId}`;
  if ([...sessionId].length > MAX_ID) {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `chatId is too long: with the user id it makes a session id of more than ${MAX_ID} characters; use a shorter chat id.`,
      { details: { argument: 'chatId' } },
    );
  }
  return sessionId;
}

/** The chat id within `sessionId`, for `userId` when there is one. */
export function chatIdOf(userId: string | undefined, sessionId: string): string {
  return userId === undefined ? sessionId : sessionId.slice(userId.length + 1);
}

/** The prefix of every session id of `userId`'s chats; undefined (every session) without one. */
export function prefixOf(userId: string | undefined): string | undefined {
  return userId === undefined ? undefined : `${userId}/`;
}
