/**
 * What the saver remembers of the last checkpoint it wrote or read in each of its most recent
 * sessions, so that the next `put` on it (its child, as LangGraph's loop writes them) reads
 * nothing: where each channel's value is held, and the texts of its values and messages.
 */
import type { CheckpointStore, Checkpoint as CkptCheckpoint } from '@ckpt/core';
import { chainOf, type KnownText } from './channel-values.js';
import { checkpointById, needsKnown } from './checkpoint-metadata.js';
import { indexOf, type StoredData, storedData, type ValueIndex } from './stored.js';
import type { KnownMessages } from './transcript.js';

/** The place of a checkpoint the saver saw last in a session, for the next `put` on it. */
export interface Seen {
  id: string;
  seq: number;
  index: ValueIndex;
  /** The texts of its channel values, where the saver has them, to hold the next as tails. */
  texts: Map<string, KnownText>;
  /** Its message channels, where the saver knows them, to tell what the next adds. */
  messages: Map<string, KnownMessages>;
  /** Whether it names what it needs: false for a checkpoint written before layout 2. */
  needsKnown: boolean;
}

/** How many sessions' last checkpoints (with their values' texts) a saver keeps in memory. */
const SEEN_SESSIONS = 256;

/** The last checkpoint seen in each of the SEEN_SESSIONS sessions used most recently. */
export class ParentCache {
  readonly #seen = new Map<string, Seen>();

  /** What is known of checkpoint `id` for a put on it, or null when it is not stored. */
  async parent(store: CheckpointStore, sessionId: string, id: string): Promise<Seen | null> {
    const seen = this.#seen.get(sessionId);
    if (seen?.id === id) return seen;
    const found = await checkpointById(store, sessionId, id);
    // Without the values' texts, the next put holds its values whole (and reads the messages
    // it needs to tell what it added).
    return found === null ? null : (this.remember(sessionId, found, new Map(), new Map()) ?? null);
  }

  /** Remember `found` as the last checkpoint of `sessionId`; undefined when the saver did not write it. */
  remember(
    sessionId: string,
    found: CkptCheckpoint,
    texts: Map<string, KnownText>,
    messages: Map<string, KnownMessages>,
  ): Seen | undefined {
    const stored = storedData(found.data);
    if (stored === null) return undefined;
    const index = indexOf(stored, found.seq);
    const seen = {
      id: stored.id,
      seq: found.seq,
      index,
      texts,
      messages,
      needsKnown: needsKnown(found.metadata),
    };
    this.#seen.delete(sessionId);
    this.#seen.set(sessionId, seen);
    if (this.#seen.size > SEEN_SESSIONS) this.#seen.delete(this.#seen.keys().next().value!);
    return seen;
  }

  /** Forget the session, or only what it remembers of a checkpoint not among `keptIds`. */
  forget(sessionId: string, keptIds?: Set<string>): void {
    const seen = this.#seen.get(sessionId);
    if (seen !== undefined && !keptIds?.has(seen.id)) this.#seen.delete(sessionId);
  }
}

/**
 * The texts of a checkpoint's channel values just written at `seq` on `parent`, where they
 * follow from the parent's known texts without reading anything.
 */
export function textsAfterPut(
  stored: StoredData,
  seq: number,
  parent: Seen | null,
): Map<string, KnownText> {
  const texts = new Map<string, KnownText>();
  for (const [channel, held] of Object.entries(stored.values)) {
    const before = parent?.texts.get(channel);
    if ('text' in held) {
      texts.set(channel, { type: held.type, text: held.text, chain: [seq] });
    } else if ('tail' in held && before !== undefined && sameSeqs(before.chain, held.on)) {
      const text = before.text.slice(0, held.keep) + held.tail;
      texts.set(channel, { type: held.type, text, chain: chainOf(held, seq) });
    }
  }
  for (const [channel, at] of Object.entries(stored.refs)) {
    const before = parent?.texts.get(channel);
    const was = parent?.index[channel];
    if (before !== undefined && was !== undefined && was[0] === at[0] && was[1] === at[1]) {
      texts.set(channel, before);
    }
  }
  return texts;
}

function sameSeqs(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((seq, i) => seq === b[i]);
}
