/**
 * Saving a chat: each save is one checkpoint written on the head the plan was made on
 * (`expectedHead`), so that two processes saving turns of one chat at once both land, one
 * after the other, and each checkpoint's count and title are right. A new branch first moves
 * the head back to where the branch starts (`rollback`, on the same expected head). The save's
 * idempotency key names its identifying message, so a save retried after a lost reply (the same
 * messages) writes nothing new, a message id that comes back with other content is known for an
 * edit even off the active branch, and the same message with other messages after it (an edit
 * made again, answered anew) goes on from where that message is stored.
 */
import { isCkptError } from '@ckpt/core';
import type { UIMessage } from 'ai';
import { missingTags } from './chat-tags.js';
import {
  type ChatMetadata,
  needsOn,
  readMetadata,
  type SaveData,
  sameLead,
  saveKey,
  toData,
  toMetadata,
} from './checkpoints.js';
import { sameMessage, toItem } from './records.js';
import { planSave, type SaveContext, type Write } from './save-plan.js';

/** What a save stored. */
export interface SaveResult {
  /**
   * The ids of the messages this save stored, new or in a new version: none when every message
   * was stored already. An edited user message is listed under the id it is stored with.
   */
  messageIds: string[];
}

/** How often a save is planned again when another writer moved the chat under it. */
const ATTEMPTS = 30;

/** Save `messages`, the chat as the caller knows it, storing what is new. */
export async function saveMessages(ctx: SaveContext, messages: UIMessage[]): Promise<SaveResult> {
  let created = false;
  for (let attempt = 1; ; attempt++) {
    const plan = await planSave(ctx, messages);
    if (plan.kind === 'none') return { messageIds: [] };
    try {
      if (plan.kind === 'create') {
        created = await createChat(ctx);
        continue;
      }
      const outcome = await write(ctx, plan);
      if (outcome !== 'again') return { messageIds: outcome };
    } catch (err) {
      if (!isCkptError(err, 'CONFLICT') || err.details.argument !== 'expectedHead') {
        // A chat this save created, and whose messages were then refused, is left as it was:
        // not there.
        if (created && (await ctx.store.info(ctx.sessionId))?.checkpoints === 1) {
          await ctx.store.delete(ctx.sessionId);
        }
        throw err;
      }
      if (attempt >= ATTEMPTS) throw err;
      await backoff(attempt);
    }
  }
}

/**
 * Create the chat: its empty root checkpoint, which every branch starts from. True when this
 * call created it, false when another had.
 */
export async function createChat(
  ctx: Pick<SaveContext, 'store' | 'sessionId' | 'tags'>,
): Promise<boolean> {
  const data: SaveData = { root: true };
  const metadata: ChatMetadata = { title: null, messages: 0, ids: [] };
  try {
    const root = await ctx.store.checkpoint(ctx.sessionId, toData(data), {
      transcript: [],
      metadata: toMetadata(metadata),
      expectedHead: null,
      idempotencyKey: saveKey(data),
      // Tagged as it is made, so that no listing by tag ever misses it.
      ...(ctx.tags === undefined ? {} : { tags: ctx.tags }),
    });
    return root.parent === null && root.seq === 1;
  } catch (err) {
    // Another save created it first.
    if (!isCkptError(err, 'CONFLICT')) throw err;
    return false;
  }
}

/** Write the plan's checkpoint; the ids saved, or 'again' when the chat must be planned anew. */
async function write(ctx: SaveContext, plan: Write): Promise<string[] | 'again'> {
  const { store, sessionId } = ctx;
  const branch = plan.on !== plan.head;
  if (branch) await store.rollback(sessionId, plan.on, { expectedHead: plan.head });
  const written = await store.checkpoint(sessionId, toData(plan.data), {
    transcript: plan.records.map(toItem),
    metadata: toMetadata(plan.metadata),
    expectedHead: plan.on,
    needs: await needsOn(store, sessionId, plan.on, plan.onMeta),
    idempotencyKey: saveKey(plan.data),
    ...(plan.tags === undefined ? {} : { tags: plan.tags }),
  });
  const ours = written.parent === plan.on && sameMessage(written.data, plan.data);
  if (ours) {
    // The same save (the same messages) by a concurrent caller wrote it first: make sure the
    // branch is active.
    if (branch) await moveHead(ctx, plan.on, written.seq);
    return plan.saved;
  }
  // The key was used before, for other messages or elsewhere in the chat's tree.
  const back = branch ? plan.on : plan.head;
  if (!sameLead(written.data, plan.data) && 'message' in plan.data) {
    // The identifying message is stored with other content: this save edits it.
    ctx.edits.add(plan.data.message);
    if (branch) await moveHead(ctx, back, plan.head);
    return 'again';
  }
  const earlier = readMetadata(written.metadata).ids;
  if (plan.saved.every((id) => earlier.includes(id))) {
    // Stored before, on a branch that is not the active one: a retry; nothing new.
    if (branch) await moveHead(ctx, back, plan.head);
    return [];
  }
  // Stored before with other messages after it (the same question answered anew, an edit made
  // again): go on from there.
  await moveHead(ctx, back, written.seq);
  return 'again';
}

/** Move the head from `from` to `to`, unless another writer moved it meanwhile. */
async function moveHead(ctx: SaveContext, from: number, to: number): Promise<void> {
  if (from === to) return;
  try {
    await ctx.store.rollback(ctx.sessionId, to, { expectedHead: from });
  } catch (err) {
    if (!isCkptError(err, 'CONFLICT')) throw err;
  }
}

/**
 * Set the chat's title, chosen by the application: one checkpoint without messages. False when
 * there is no such chat (a title alone makes none).
 */
export async function writeTitle(
  ctx: Pick<SaveContext, 'store' | 'sessionId' | 'tags'>,
  title: string,
): Promise<boolean> {
  const { store, sessionId } = ctx;
  for (let attempt = 1; ; attempt++) {
    const info = await store.info(sessionId);
    if (info === null) return false;
    const meta = readMetadata(info.metadata);
    if (meta.titleSet && meta.title === title) return true;
    const metadata: ChatMetadata = { title, titleSet: true, messages: meta.messages, ids: [] };
    if (meta.tail !== undefined) metadata.tail = meta.tail;
    const tags = missingTags(ctx.tags, info.tags);
    try {
      await store.checkpoint(sessionId, toData({ title: true }), {
        transcript: [],
        metadata: toMetadata(metadata),
        expectedHead: info.head,
        needs: await needsOn(store, sessionId, info.head, meta),
        ...(tags === undefined ? {} : { tags }),
      });
      return true;
    } catch (err) {
      if (!isCkptError(err, 'CONFLICT') || attempt >= ATTEMPTS) throw err;
      await backoff(attempt);
    }
  }
}

/** A jittered wait that grows with each attempt, so that contending writers spread out. */
export function backoff(attempt: number): Promise<void> {
  const ceiling = Math.min(2 ** attempt, 100);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
}
