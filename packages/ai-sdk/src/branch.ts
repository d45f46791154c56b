/**
 * The active branch of a chat: the stored messages on the ckpt session's active timeline,
 * read from its transcript newest first. A message revised in place (a tool's output, an
 * approval answered: the same id saved again) appears on the transcript once per version; the
 * walk gives each message once, in its newest version. Revisions are only ever written for the
 * newest message of the branch (see save-plan.ts), so that version stands where the message
 * first stood.
 */
import type { CheckpointStore } from '@ckpt/core';
import { fromItem, type StoredMessage } from './records.js';

/** A stored message of the active branch, with the checkpoint and transcript index holding it. */
export interface BranchEntry {
  record: StoredMessage;
  seq: number;
  index: number;
  /** An older version of a message whose newer version came earlier in the walk. */
  shadowed: boolean;
}

/** The largest transcript page. */
const MAX_PAGE = 1000;

/**
 * The stored messages of the active branch, newest first: each message in its newest version,
 * then its older versions marked `shadowed`. The first transcript page read is `firstPage`
 * items long, so that a caller who needs only the newest few reads little; later pages are as
 * long as ckpt allows.
 */
export async function* walkBranch(
  store: CheckpointStore,
  sessionId: string,
  firstPage = MAX_PAGE,
): AsyncGenerator<BranchEntry> {
  const seen = new Set<string>();
  let limit = Math.min(firstPage, MAX_PAGE);
  let cursor: string | null = null;
  do {
    const page = await store.transcript(sessionId, { limit, cursor });
    for (const entry of page.items) {
      const record = fromItem(entry.item);
      // Items this package did not write are not messages of the chat.
      if (record === null) continue;
      const shadowed = seen.has(record.message.id);
      seen.add(record.message.id);
      yield { record, seq: entry.seq, index: entry.index, shadowed };
    }
    cursor = page.cursor;
    limit = MAX_PAGE;
  } while (cursor !== null);
}

/** The whole active branch, oldest first. */
export async function readBranch(
  store: CheckpointStore,
  sessionId: string,
): Promise<BranchEntry[]> {
  const entries: BranchEntry[] = [];
  for await (const entry of walkBranch(store, sessionId)) if (!entry.shadowed) entries.push(entry);
  return entries.reverse();
}
