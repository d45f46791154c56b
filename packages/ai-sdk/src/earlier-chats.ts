/**
 * The chats of a user saved before their store kept tags (by an earlier version of this
 * package, or on a backend that had no tags then) carry no `user` tag: only their ids'
 * prefix, `${userId}/`, says whose they are. The user's first listing on a store with tags
 * tags them all, once, then records so in the state scope `<scope>.tagged` (key: the user id),
 * and every listing from then on reads the tag index alone.
 *
 * Why once, and not a listing that merges the prefix listing in for as long as untagged chats
 * may remain: nothing tells when the last of them is gone (an old chat nobody opens again
 * keeps it so forever), and a prefix listing reads every chat of the user for each page, the
 * cost the tag index is there to end. Tagging once costs that reading one time per user (every
 * chat of the user, a page of 1000 at a time, and one `setTags` per untagged chat), and a
 * listing's page is then one read of the index. `setTags` leaves a chat's checkpoints and its
 * updatedAt, so the chats keep their places in the list while they are tagged.
 *
 * A chat that arrives untagged afterwards (made by an earlier version of this package still
 * running during a rolling upgrade, or imported from an export made before tags) is tagged by
 * the next save or title written to it through this version, and listed from then on.
 */
import { type CheckpointStore, isCkptError, type StateScope } from '@ckpt/core';
import { type ChatTags, missingTags } from './chat-tags.js';

/** The largest page of `sessions()`: the fewest reads of the prefix listing. */
const PAGE = 1000;

/** Tags each chat under `prefix` with `tags` where it lacks them, once for `userId` (see above). */
export async function tagEarlierChats(
  store: CheckpointStore,
  marks: StateScope,
  userId: string,
  prefix: string,
  tags: ChatTags,
): Promise<void> {
  if ((await marks.get(userId)) === true) return;
  let cursor: string | null = null;
  do {
    const page = await store.sessions({ prefix, limit: PAGE, cursor });
    await Promise.all(
      page.items.map(async (chat) => {
        const next = missingTags(tags, chat.tags);
        if (next !== undefined) await tagChat(store, chat.sessionId, next);
      }),
    );
    cursor = page.cursor;
  } while (cursor !== null);
  await marks.set(userId, true);
}

async function tagChat(store: CheckpointStore, sessionId: string, tags: ChatTags): Promise<void> {
  try {
    await store.setTags(sessionId, tags);
  } catch (err) {
    // Deleted since it was listed: nothing left to tag.
    if (!isCkptError(err, 'NOT_FOUND')) throw err;
  }
}
