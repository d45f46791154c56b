/**
 * Where `kvBackend` keeps things in a KvStore, and the format of what it keeps. Under the
 * prefix (default `ckpt:`), with `ID` the escaped session id and `GEN` a random generation
 * fixed when the session is created (so a deleted and re-created or forked session never reads
 * another incarnation's keys):
 *
 *   s:ID                 session record (JSON): head, last seq, stored seqs, the last write
 *                        (its seq, nonce and idempotency key), which of them need others (only
 *                        once one does), the pins (only while there are some) and the kind of
 *                        change that wrote it; or, once a sweep deleted the session, a
 *                        tombstone (see TOMBSTONE)
 *   c:ID:GEN:SEQ         checkpoint body: header line (with its needs, if any, and the nonce
 *                        and key of the call that wrote it), data, metadata, transcript
 *   i:ID:GEN:KEY         idempotency key -> seq, for every key but the last write's
 *   v:SCOPE:KEY          state value (SCOPE escaped, KEY as it is)
 *   t:TAG:VALUE:POS TOKEN  tag index entry (see tag-index.ts): one for each tag of a tagged
 *                        session, TAG and VALUE escaped, POS the session's place in the
 *                        catalog (newest-first.ts), TOKEN the record's `tagged`
 */
import { randomBytes } from 'node:crypto';
import type { Tags } from '../values/tags.js';
import type { SeqRanges } from './seq-ranges.js';

/** A session's record: its single commit point (see kv-backend.ts). */
export interface SessionRecord {
  gen: string;
  head: number;
  last: number;
  seqs: SeqRanges;
  forkedFrom: { sessionId: string; seq: number } | null;
  metadata: string;
  createdAt: number;
  updatedAt: number;
  /**
   * The last append: its seq, the nonce its body carries (by which its caller knows it was
   * written, when another caller committed it) and its idempotency key, which is written
   * under `i:` only by the append after it. Absent until a session's first append.
   */
  tip?: Tip;
  /**
   * Random on every write of the record: what a body's `base` names as the record its append
   * read, and why a record never reads as one written before it, so that a compare-and-set on
   * a store that compares values cannot succeed on a stale read.
   */
  rev?: string;
  /**
   * The stored seqs whose bodies name needs: absent while there are none, so that a session
   * without needs keeps the record it always had, and prune reads no body of it.
   */
  needy?: SeqRanges;
  /** The pinned seqs, ascending, each with its note: absent while there are none. */
  pins?: [number, string | null][];
  /** The session's tags, keys ascending: absent while it has none. */
  tags?: Tags;
  /**
   * With `tags`: the token of the tag index's entries that stand for this record (see
   * tag-index.ts), fresh whenever the tags or updatedAt change.
   */
  tagged?: string;
  /**
   * The change that wrote this record, set on every write of it, so that a store's log of its
   * writes says what each write of a record was (see kv-change-log.ts). Absent in records that
   * writes before it was kept made: those were checkpoints, or changes read as one.
   */
  change?: RecordChange;
}

/**
 * What a write of a session record was: a change `watch()` gives, or `quiet` for one it does
 * not (a pin, an unpin, a change of tags alone, or the record written again to turn away a
 * stale append's body).
 */
export type RecordChange = 'checkpoint' | 'rollback' | 'fork' | 'prune' | 'quiet';

/**
 * What a sweep leaves at the record of a session it deleted as idle. A KvStore can only delete
 * a key unconditionally, so a delete decided on a record read before it could remove a session
 * a writer made in between; the sweep instead swaps the record for this with compare-and-set,
 * which fails if anything was written since. Every reader takes it as no session; a writer
 * creating the session swaps it for a record the same way; `delete` removes it.
 */
export const TOMBSTONE = '{"gone":true}';

/** An append as its session's record names it. */
export interface Tip {
  seq: number;
  nonce: string;
  key?: string;
}

/** The first line of a body. */
export interface BodyHeader {
  seq: number;
  parent: number | null;
  createdAt: number;
  /** The seqs it needs, when there are any. */
  needs?: number[];
  /** The nonce of the append that wrote it (absent in a fork's or an import's copies). */
  nonce?: string;
  /** That append's idempotency key, when it had one. */
  key?: string;
  /** The `rev` of the record that append read (absent for a session's first checkpoint). */
  base?: string;
  /**
   * The tags that append gave the session, replacing those of the record it read (absent:
   * it left them): what the record committing it holds.
   */
  tags?: Tags;
}

/** A checkpoint as a body holds it. */
export type Body = Omit<BodyHeader, 'nonce' | 'key' | 'base' | 'tags'> & {
  data: string;
  metadata: string;
  transcript: string;
};

// Each part of a body is JSON text, and JSON.stringify never writes a raw newline, so a
// newline separates the parts without escaping them a second time.
export function makeBody(
  header: BodyHeader,
  data: string,
  metadata: string,
  transcript: string,
): string {
  return `${JSON.stringify(header)}\n${data}\n${metadata}\n${transcript}`;
}

export function parseHeader(body: string): BodyHeader {
  return JSON.parse(body.slice(0, body.indexOf('\n'))) as BodyHeader;
}

export function parseBody(body: string): Body {
  const a = body.indexOf('\n');
  const b = body.indexOf('\n', a + 1);
  const c = body.indexOf('\n', b + 1);
  const {
    nonce: _,
    key: __,
    base: ___,
    tags: ____,
    ...header
  } = JSON.parse(body.slice(0, a)) as BodyHeader;
  return {
    ...header,
    data: body.slice(a + 1, b),
    metadata: body.slice(b + 1, c),
    transcript: body.slice(c + 1),
  };
}

/** `body` with its data and transcript replaced, its header line and metadata kept as they are. */
export function withValues(body: string, data: string, transcript: string): string {
  const a = body.indexOf('\n');
  const b = body.indexOf('\n', a + 1);
  const c = body.indexOf('\n', b + 1);
  return `${body.slice(0, a)}\n${data}${body.slice(b, c)}\n${transcript}`;
}

// Escapes the separator so a name can never reach into another name's keys.
function escapeName(name: string): string {
  return name.replace(/%/g, '%25').replace(/:/g, '%3A');
}

function unescapeName(text: string): string {
  return text.replace(/%3A/g, ':').replace(/%25/g, '%');
}

/** A random generation or nonce. */
export function token(): string {
  return randomBytes(6).toString('hex');
}

/** The keys of the layout above, under `p`. */
export function kvKeys(p: string) {
  const sessions = `${p}s:`;
  return {
    /** The prefix of every session record: the catalog. */
    sessions,
    session: (id: string) => sessions + escapeName(id),
    /**
     * The prefix of the records of the sessions whose id starts with `prefix`: escaping changes
     * each character on its own, and no escape is the start of another, so an escaped id starts
     * with the escaped prefix exactly when the id starts with the prefix.
     */
    sessionsWithPrefix: (prefix: string) => sessions + escapeName(prefix),
    /** The session id of a key under `sessions`. */
    sessionIdOf: (key: string) => unescapeName(key.slice(sessions.length)),
    body: (id: string, gen: string, seq: number) => `${p}c:${escapeName(id)}:${gen}:${seq}`,
    idempotencyPrefix: (id: string, gen: string) => `${p}i:${escapeName(id)}:${gen}:`,
    /** The prefix of scope `scope`'s state keys; a key is appended as it is. */
    statePrefix: (scope: string) => `${p}v:${escapeName(scope)}:`,
    /** The prefix of every state key. */
    states: `${p}v:`,
    /**
     * The prefix of the tag index's entries for the tag `key` with `value`: escaped, neither
     * holds `:`, so the prefix names one pair, and no other pair's entries start with it.
     */
    tagEntries: (key: string, value: string) => `${p}t:${escapeName(key)}:${escapeName(value)}:`,
    /** The scope of a key under `states`. */
    scopeOf: (key: string) => {
      const rest = key.slice(p.length + 2);
      return unescapeName(rest.slice(0, rest.indexOf(':')));
    },
  };
}
