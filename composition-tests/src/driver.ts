/**
 * What the suite needs to know of an integration: how its sessions are named, the writes its
 * framework makes, and what its framework reads, as one comparable snapshot. Adding an
 * integration to the suite is adding one `Driver` to drivers/index.ts.
 */
import type { CheckpointStore } from '@ckpt/core';
import type fc from 'fast-check';

/** One session of an integration on one store. */
export interface Bound {
  store: CheckpointStore;
  sessionId: string;
}

/**
 * What the framework reads of one session. Each part is plain JSON, compared with `toEqual`;
 * a property named `stamp` anywhere holds times that only a store carrying them (copy, import)
 * keeps, and is left out where the same writes were made on another store (the twin).
 */
export interface Reads {
  /** What the application sees now: the state, the items, the active branch and its entry. */
  current: unknown;
  /**
   * The earlier checkpoints the framework lists (LangGraph's `getStateHistory`), by ckpt seq,
   * each as it reads; `{}` for a framework that lists none. Removing operations may leave a
   * subset of them (see rules.ts).
   */
  checkpoints: Record<number, unknown>;
}

export interface Driver<Write = unknown, Action = unknown> {
  /** The integration, as the test titles name it. */
  name: string;
  /** The state scopes the integration writes, emptied between runs on a server. */
  scopes: string[];
  /** The ckpt session of the conversation (thread, chat) the suite calls `name`. */
  sessionId(name: string): string;
  /** How the `ckpt` command names that session. */
  cliWords(sessionId: string): string[];
  /** One framework-level write, as fast-check draws it. */
  write: fc.Arbitrary<Write>;
  /**
   * The write made concrete for this point of the run (which message an edit replaces, which
   * checkpoint time travel starts from), from the twin, which holds everything that was written,
   * and the store under test. `step` makes every id the write makes unique in the run.
   */
  prepare(write: Write, on: { real: Bound; twin: Bound }, step: number): Promise<Action>;
  /** Make the write through the framework; a refusal is thrown as the framework throws it. */
  perform(action: Action, on: Bound): Promise<void>;
  /** What the framework reads of the session. */
  read(on: Bound): Promise<Reads>;
  /**
   * What a fork reads where its source read `reads` (a current read or a listed checkpoint),
   * for an integration whose README says a fork reads otherwise; the same by default.
   */
  asForked?(reads: unknown): unknown;
}
