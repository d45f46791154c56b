/**
 * A page of a transcript: the items of the checkpoints on the active timeline, newest first,
 * read by walking from a checkpoint up its parents a chunk of lineage at a time.
 */
import { parseValue } from '../codecs/chain.js';
import type { JsonValue } from '../values/json.js';
import type { SessionValues } from './session-values.js';
import type { TranscriptEntry } from './types.js';

// How many checkpoints one page may walk past without finding items before it returns what
// it has (with a place to go on from), so that a page's cost stays bounded.
const WALK_BUDGET = 1000;

/** Where a page starts: the entry (seq, index) the previous page ended on; the page begins just after it. */
export type TranscriptPosition = [seq: number, index: number];

/** What one walk found. */
export interface TranscriptWalk {
  /** Up to `limit + 1` entries: one more than the page holds means there are more. */
  entries: TranscriptEntry[];
  /**
   * Where the next page goes on when the walk ran out of budget before it found `limit + 1`
   * entries, or null when the timeline has no more.
   */
  resumeAt: TranscriptPosition | null;
}

/** Walk the session's timeline from `start` (null: the head) for up to `limit + 1` entries. */
export async function walkTranscript(
  values: SessionValues,
  limit: number,
  start: TranscriptPosition | null,
): Promise<TranscriptWalk> {
  const entries: TranscriptEntry[] = [];
  let fromSeq: number | null = start === null ? null : start[0];
  let walked = 0;
  let lastWalked: number | null = null;
  while (walked < WALK_BUDGET) {
    const chunk = await values.backend.lineage(values.sessionId, {
      fromSeq,
      limit: limit + 1,
      transcript: true,
    });
    for (const entry of chunk) {
      walked++;
      lastWalked = entry.seq;
      // Awaited only when it is a promise: a page of plain items takes no turn per checkpoint.
      const opened = values.open(entry.transcript ?? '[]', 'transcript', entry.seq);
      const text = typeof opened === 'string' ? opened : await opened;
      const items = parseValue(text, {
        session: values.sessionId,
        part: 'transcript',
        seq: entry.seq,
      }) as JsonValue[];
      // The checkpoint the previous page ended in goes on below the entry it ended on.
      const below = start !== null && entry.seq === start[0] ? start[1] : items.length;
      for (let index = Math.min(below, items.length) - 1; index >= 0; index--) {
        const item = items[index] as JsonValue;
        entries.push({ seq: entry.seq, index, item, createdAt: new Date(entry.createdAt) });
      }
      if (entries.length > limit) return { entries, resumeAt: null };
    }
    const last = chunk[chunk.length - 1];
    if (chunk.length <= limit || last === undefined || last.parent === null) {
      return { entries, resumeAt: null };
    }
    fromSeq = last.parent;
  }
  // The budget ran out before the page filled: go on after the last checkpoint walked.
  return { entries, resumeAt: lastWalked === null ? null : [lastWalked, 0] };
}
