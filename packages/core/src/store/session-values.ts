/**
 * A session's checkpoint values through the store's codecs. A value an encryption sealed names
 * the session it was written for, and reads only in that session or in one forked from it
 * (a fork holds copies of its source's checkpoints, sealed for the source).
 */
import type { CompleteBackend } from '../adapter/backend.js';
import type { CodecChain } from '../codecs/chain.js';
import { unreadable } from '../codecs/codec.js';

/** How far up a chain of forks a value's session is looked for. */
const MAX_FORK_HOPS = 1000;

/** The two checkpoint values codecs apply to. */
export type CheckpointPart = 'data' | 'transcript';

/** Encode a checkpoint value of `sessionId` (JSON text) as it is stored. */
export function sealCheckpointValue(
  codecs: CodecChain,
  sessionId: string,
  part: CheckpointPart,
  text: string,
): string {
  // A checkpoint without transcript items keeps `[]`, which backends store as no items at all.
  if (part === 'transcript' && text === '[]') return text;
  return codecs.encode(text, { session: sessionId, part });
}

/** `use` of an opened value's text: at once when it is there, else once it is. */
export function whenOpened<T>(
  opened: string | Promise<string>,
  use: (text: string) => T,
): T | Promise<T> {
  return typeof opened === 'string' ? use(opened) : opened.then(use);
}

/** Reads the stored values of one session, remembering which sources of forks it checked. */
export class SessionValues {
  readonly #ancestors = new Set<string>();

  constructor(
    readonly backend: CompleteBackend,
    readonly codecs: CodecChain,
    readonly sessionId: string,
  ) {}

  /**
   * The JSON text of a stored value of checkpoint `seq` of this session: at once, unless the value was sealed for
   * another session, which must then be found among the sources of its forks. A plain value
   * (the common case, with no codecs) costs no promise and no turn of the event loop.
   */
  open(stored: string, part: CheckpointPart, seq: number): string | Promise<string> {
    const { text, sealedFor } = this.codecs.decode(stored, { session: this.sessionId, part, seq });
    if (sealedFor === null || sealedFor === this.sessionId || this.#ancestors.has(sealedFor)) {
      return text;
    }
    return this.#checkAncestor(sealedFor, seq).then(() => text);
  }

  /** Refuse a value sealed for `sealedFor` unless this session was forked from it. */
  async #checkAncestor(sealedFor: string, seq: number): Promise<void> {
    if (!(await this.#forkedFrom(sealedFor))) {
      throw unreadable(
        'place',
        `a stored value of checkpoint ${seq} of session ${JSON.stringify(this.sessionId)} was written for session ${JSON.stringify(sealedFor)}, which it was not forked from: it was moved there after it was written.`,
        { sessionId: this.sessionId },
      );
    }
    this.#ancestors.add(sealedFor);
  }

  /**
   * Whether this session descends from `ancestor` by forks. A session along the way that was
   * deleted ends what can be followed: the value is then taken as its own (core's README says
   * so). So is one read while this session itself was being deleted.
   */
  async #forkedFrom(ancestor: string): Promise<boolean> {
    let current = this.sessionId;
    for (let hop = 0; hop < MAX_FORK_HOPS; hop++) {
      const found = await this.backend.session(current);
      if (found === null) return true;
      if (found.forkedFrom === null) return false;
      if (found.forkedFrom.sessionId === ancestor) return true;
      current = found.forkedFrom.sessionId;
    }
    return false;
  }
}
