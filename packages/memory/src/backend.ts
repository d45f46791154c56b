/**
 * The in-memory native backend: the reference implementation. Every method runs to completion
 * without awaiting anything, so each one is atomic by construction, and several
 * `CheckpointStore`s sharing one instance see each other's writes at once.
 */

import { compareCodePoints } from '@ckpt/core';
import {
  type AppendInput,
  type AppendResult,
  type CheckpointBackend,
  closeOverNeeds,
  compareSessionsNewestFirst,
  type DeleteIdleResult,
  type ForkInput,
  type ForkResult,
  type ImportInput,
  type PinResult,
  type PruneRule,
  pruneSideBySide,
  type RewriteInput,
  type RollbackInput,
  type RollbackResult,
  type SessionPosition,
  type StoredCheckpoint,
  type StoredLineageEntry,
  type StoredSession,
  type Tags,
} from '@ckpt/core/adapter';
import { MemoryChangeLog } from './change-log.js';
import { checkMemoryOptions, type MemoryOptions } from './options.js';

interface MemoryCheckpoint extends StoredCheckpoint {
  transcript: string;
  /** The stored seqs it needs, ascending (`[]` when none). */
  needs: number[];
}

interface MemorySession {
  head: number;
  last: number;
  forkedFrom: { sessionId: string; seq: number } | null;
  createdAt: number;
  updatedAt: number;
  /** Insertion order is ascending seq: appends add above the top, forks copy oldest first. */
  checkpoints: Map<number, MemoryCheckpoint>;
  idempotency: Map<string, number>;
  tags: Tags;
}

/** The in-memory backend (see `memory()`). */
export class MemoryBackend implements CheckpointBackend {
  readonly name = 'memory';
  readonly capabilities = {
    concurrentWriters: true,
    listSessions: true,
    listStateKeys: true,
    watch: true,
    tags: true,
  };
  /** The namespace this instance was opened with. */
  readonly namespace: string;
  readonly #sessions = new Map<string, MemorySession>();
  readonly #state = new Map<string, Map<string, string>>();
  /** The tag index: the ids of the sessions that have each tag (see tagKey). */
  readonly #tagged = new Map<string, Set<string>>();
  readonly #log = new MemoryChangeLog();

  constructor(options: MemoryOptions = {}) {
    this.namespace = checkMemoryOptions(options, 'memory');
  }

  async append(input: AppendInput): Promise<AppendResult> {
    const session = this.#sessions.get(input.sessionId);
    if (session && input.idempotencyKey !== undefined) {
      const seq = session.idempotency.get(input.idempotencyKey);
      if (seq !== undefined) {
        return { status: 'replayed', seq, checkpoint: session.checkpoints.get(seq) ?? null };
      }
    }
    const head = session?.head ?? null;
    if (input.expectedHead !== undefined && input.expectedHead !== head) {
      return { status: 'conflict', head };
    }
    const target = session ?? this.#createSession(input.sessionId, input.now, null);
    // One above the highest seq the session ever had, so that none is reused after a rollback.
    const seq = target.last + 1;
    target.checkpoints.set(seq, {
      seq,
      parent: head,
      data: input.data,
      metadata: input.metadata,
      transcript: input.transcript,
      createdAt: input.now,
      pinned: false,
      pinNote: null,
      needs: input.needs.filter((needed) => target.checkpoints.has(needed)),
    });
    target.head = seq;
    target.last = seq;
    target.updatedAt = input.now;
    if (input.idempotencyKey !== undefined) target.idempotency.set(input.idempotencyKey, seq);
    if (input.tags) this.#tag(input.sessionId, target, input.tags);
    this.#log.record(input.sessionId, 'checkpoint', seq);
    return { status: 'written', seq, parent: head };
  }

  async load(sessionId: string, seq: number | null): Promise<StoredCheckpoint | null> {
    const session = this.#sessions.get(sessionId);
    if (!session) return null;
    const found = session.checkpoints.get(seq ?? session.head);
    return found ? withoutTranscript(found) : null;
  }

  async loadByKey(sessionId: string, idempotencyKey: string): Promise<StoredCheckpoint | null> {
    const session = this.#sessions.get(sessionId);
    const seq = session?.idempotency.get(idempotencyKey);
    const found = seq === undefined ? undefined : session?.checkpoints.get(seq);
    return found ? withoutTranscript(found) : null;
  }

  async session(sessionId: string): Promise<StoredSession | null> {
    const session = this.#sessions.get(sessionId);
    return session ? this.#describe(sessionId, session) : null;
  }

  async listCheckpoints(sessionId: string, query: { beforeSeq: number | null; limit: number }) {
    const session = this.#sessions.get(sessionId);
    if (!session) return [];
    const below = query.beforeSeq ?? Number.POSITIVE_INFINITY;
    return [...session.checkpoints.values()]
      .filter((cp) => cp.seq < below)
      .sort((a, b) => b.seq - a.seq)
      .slice(0, query.limit)
      .map(({ seq, parent, metadata, createdAt, pinned, pinNote }) => ({
        seq,
        parent,
        metadata,
        createdAt,
        pinned,
        pinNote,
      }));
  }

  async lineage(
    sessionId: string,
    query: { fromSeq: number | null; limit: number; transcript: boolean },
  ): Promise<StoredLineageEntry[]> {
    const session = this.#sessions.get(sessionId);
    if (!session) return [];
    const out: StoredLineageEntry[] = [];
    let cp = session.checkpoints.get(query.fromSeq ?? session.head);
    while (cp && out.length < query.limit) {
      const { seq, parent, createdAt, transcript } = cp;
      out.push(
        query.transcript ? { seq, parent, createdAt, transcript } : { seq, parent, createdAt },
      );
      cp = parent === null ? undefined : session.checkpoints.get(parent);
    }
    return out;
  }

  async rollback(input: RollbackInput): Promise<RollbackResult> {
    const session = this.#sessions.get(input.sessionId);
    if (!session) return { status: 'not_found', missing: 'session' };
    if (input.expectedHead !== undefined && input.expectedHead !== session.head) {
      return { status: 'conflict', head: session.head };
    }
    if (!session.checkpoints.has(input.seq)) return { status: 'not_found', missing: 'seq' };
    session.head = input.seq;
    session.updatedAt = input.now;
    this.#log.record(input.sessionId, 'rollback', input.seq);
    return { status: 'done' };
  }

  async fork(input: ForkInput): Promise<ForkResult> {
    const source = this.#sessions.get(input.sessionId);
    if (!source) return { status: 'not_found', missing: 'session' };
    const at = input.atSeq ?? source.head;
    if (!source.checkpoints.has(at)) return { status: 'not_found', missing: 'seq' };
    if (this.#sessions.has(input.newId)) return { status: 'exists' };
    const chain: number[] = [];
    for (let cp = source.checkpoints.get(at); cp; ) {
      chain.push(cp.seq);
      cp = cp.parent === null ? undefined : source.checkpoints.get(cp.parent);
    }
    const copied = closeOverNeeds(chain, (seq) => source.checkpoints.get(seq)?.needs ?? []);
    const copy = this.#createSession(input.newId, input.now, {
      sessionId: input.sessionId,
      seq: at,
    });
    for (const seq of [...copied].sort((a, b) => a - b)) {
      const cp = source.checkpoints.get(seq);
      // A fork copies no pins: what its source keeps, the fork may let go.
      if (cp)
        copy.checkpoints.set(seq, { ...cp, pinned: false, pinNote: null, needs: [...cp.needs] });
    }
    copy.head = at;
    copy.last = at;
    this.#tag(input.newId, copy, source.tags);
    this.#log.record(input.newId, 'fork', at);
    return { status: 'done', seq: at };
  }

  pruneBatch(sessionIds: readonly string[], rule: PruneRule, dryRun: boolean): Promise<number> {
    return pruneSideBySide((id, r, dry) => this.prune(id, r, dry), sessionIds, rule, dryRun);
  }

  async prune(sessionId: string, rule: PruneRule, dryRun = false): Promise<number> {
    const session = this.#sessions.get(sessionId);
    if (!session) return 0;
    const newestFirst = [...session.checkpoints.keys()].sort((a, b) => b - a);
    const keptForThemselves = newestFirst.filter((seq, rank) => {
      const cp = session.checkpoints.get(seq)!;
      const beyondKeepLast = rule.keepLast === null || rank >= rule.keepLast;
      const oldEnough = rule.createdBefore === null || cp.createdAt < rule.createdBefore;
      return seq === session.head || cp.pinned || !(beyondKeepLast && oldEnough);
    });
    const kept = closeOverNeeds(
      keptForThemselves,
      (seq) => session.checkpoints.get(seq)?.needs ?? [],
    );
    let removed = 0;
    for (const seq of newestFirst) {
      if (!kept.has(seq)) {
        if (!dryRun) session.checkpoints.delete(seq);
        removed++;
      }
    }
    if (removed > 0 && !dryRun) this.#log.record(sessionId, 'prune', session.head);
    return removed;
  }

  async pin(input: { sessionId: string; seq: number; note: string | null }): Promise<PinResult> {
    const session = this.#sessions.get(input.sessionId);
    if (!session) return { status: 'not_found', missing: 'session' };
    const cp = session.checkpoints.get(input.seq);
    if (!cp) return { status: 'not_found', missing: 'seq' };
    cp.pinned = true;
    cp.pinNote = input.note;
    return { status: 'done' };
  }

  async unpin(sessionId: string, seq: number): Promise<boolean> {
    const cp = this.#sessions.get(sessionId)?.checkpoints.get(seq);
    if (!cp?.pinned) return false;
    cp.pinned = false;
    cp.pinNote = null;
    return true;
  }

  async deleteIdle(
    sessionId: string,
    idleBefore: number,
    dryRun: boolean,
  ): Promise<DeleteIdleResult> {
    const session = this.#sessions.get(sessionId);
    if (!session || session.updatedAt >= idleBefore) return { status: 'kept' };
    for (const cp of session.checkpoints.values()) if (cp.pinned) return { status: 'kept' };
    if (!dryRun) {
      this.#remove(sessionId);
      this.#log.record(sessionId, 'delete', null);
    }
    return { status: 'deleted', checkpoints: session.checkpoints.size };
  }

  async delete(sessionId: string): Promise<boolean> {
    const deleted = this.#remove(sessionId);
    if (deleted) this.#log.record(sessionId, 'delete', null);
    return deleted;
  }

  async setTags(sessionId: string, tags: Tags): Promise<boolean> {
    const session = this.#sessions.get(sessionId);
    if (!session) return false;
    this.#tag(sessionId, session, tags);
    return true;
  }

  async sessions(query: {
    after: SessionPosition | null;
    limit: number;
    prefix: string;
    where?: Tags;
  }) {
    const { after, prefix } = query;
    const where = Object.entries(query.where ?? {});
    // The smallest set of the index among the pairs asked for; the others filter it.
    const candidates =
      where.length === 0
        ? this.#sessions.keys()
        : where
            .map(([key, value]) => this.#tagged.get(tagKey(key, value)) ?? new Set<string>())
            .reduce((a, b) => (b.size < a.size ? b : a));
    return [...candidates]
      .filter((id) => id.startsWith(prefix))
      .map((id) => [id, this.#sessions.get(id)!] as const)
      .filter(([, session]) => where.every(([key, value]) => session.tags[key] === value))
      .map(([id, session]) => this.#describe(id, session))
      .filter((s) => after === null || compareSessionsNewestFirst(s, after) > 0)
      .sort(compareSessionsNewestFirst)
      .slice(0, query.limit);
  }

  async exportCheckpoints(sessionId: string, query: { afterSeq: number | null; limit: number }) {
    const session = this.#sessions.get(sessionId);
    if (!session) return [];
    const after = query.afterSeq ?? 0;
    return [...session.checkpoints.values()]
      .filter((cp) => cp.seq > after)
      .sort((a, b) => a.seq - b.seq)
      .slice(0, query.limit)
      .map((cp) => ({ ...cp, needs: [...cp.needs] }));
  }

  async rewriteCheckpoint(input: RewriteInput): Promise<boolean> {
    const found = this.#sessions.get(input.sessionId)?.checkpoints.get(input.seq);
    if (
      found === undefined ||
      found.data !== input.from.data ||
      found.transcript !== input.from.transcript
    ) {
      return false;
    }
    found.data = input.to.data;
    found.transcript = input.to.transcript;
    return true;
  }

  async importSession(input: ImportInput): Promise<'imported' | 'exists'> {
    if (this.#sessions.has(input.sessionId) && !input.replace) return 'exists';
    this.#remove(input.sessionId);
    const session = this.#createSession(input.sessionId, input.createdAt, input.forkedFrom);
    this.#tag(input.sessionId, session, input.tags ?? {});
    for (const cp of input.checkpoints) {
      session.checkpoints.set(cp.seq, { ...cp, needs: [...cp.needs] });
    }
    session.head = input.head;
    session.last = input.checkpoints.at(-1)!.seq;
    session.updatedAt = input.updatedAt;
    this.#log.record(input.sessionId, 'checkpoint', input.head);
    return 'imported';
  }

  async stateGet(scope: string, key: string) {
    return this.#state.get(scope)?.get(key);
  }

  async stateSet(scope: string, key: string, value: string) {
    this.#scope(scope).set(key, value);
    this.#log.record(scope, 'state', null);
  }

  async stateDelete(scope: string, key: string) {
    const deleted = this.#state.get(scope)?.delete(key) ?? false;
    if (deleted) this.#log.record(scope, 'state', null);
    return deleted;
  }

  async stateCompareAndSet(scope: string, key: string, expected: string | null, value: string) {
    const values = this.#scope(scope);
    if ((values.get(key) ?? null) !== expected) return false;
    values.set(key, value);
    this.#log.record(scope, 'state', null);
    return true;
  }

  async stateKeys(scope: string, query: { prefix: string; after: string | null; limit: number }) {
    const { prefix, after } = query;
    return [...(this.#state.get(scope)?.keys() ?? [])]
      .filter((k) => k.startsWith(prefix) && (after === null || compareCodePoints(k, after) > 0))
      .sort(compareCodePoints)
      .slice(0, query.limit);
  }

  async stateScopes(query: { after: string | null; limit: number }) {
    const { after } = query;
    return [...this.#state]
      .filter(
        ([scope, values]) =>
          values.size > 0 && (after === null || compareCodePoints(scope, after) > 0),
      )
      .map(([scope]) => scope)
      .sort(compareCodePoints)
      .slice(0, query.limit);
  }

  /** Nothing to release: the data lives as long as this instance, shared by every store on it. */
  /** Forget every session and state value: the instance is the namespace. */
  async destroy(): Promise<void> {
    this.#sessions.clear();
    this.#state.clear();
    this.#tagged.clear();
  }

  async changes(query: { after: string | null; limit: number }) {
    return this.#log.changes(query);
  }

  async onChanges(wake: () => void) {
    return this.#log.listen(wake);
  }

  async close(): Promise<void> {}

  #createSession(
    sessionId: string,
    now: number,
    forkedFrom: MemorySession['forkedFrom'],
  ): MemorySession {
    const session: MemorySession = {
      head: 0,
      last: 0,
      forkedFrom,
      createdAt: now,
      updatedAt: now,
      checkpoints: new Map(),
      idempotency: new Map(),
      tags: {},
    };
    this.#sessions.set(sessionId, session);
    return session;
  }

  #describe(sessionId: string, session: MemorySession): StoredSession {
    return {
      sessionId,
      head: session.head,
      checkpoints: session.checkpoints.size,
      forkedFrom: session.forkedFrom,
      metadata: session.checkpoints.get(session.head)?.metadata ?? '{}',
      createdAt: session.createdAt,
      updatedAt: session.updatedAt,
      tags: session.tags,
    };
  }

  /** Give the session `tags` in place of its own, in the index too. */
  #tag(sessionId: string, session: MemorySession, tags: Tags): void {
    for (const [key, value] of Object.entries(session.tags)) {
      const ids = this.#tagged.get(tagKey(key, value));
      ids?.delete(sessionId);
      if (ids?.size === 0) this.#tagged.delete(tagKey(key, value));
    }
    session.tags = { ...tags };
    for (const [key, value] of Object.entries(tags)) {
      const ids = this.#tagged.get(tagKey(key, value)) ?? new Set<string>();
      ids.add(sessionId);
      this.#tagged.set(tagKey(key, value), ids);
    }
  }

  /** Remove the session and its tags; false when there was none. */
  #remove(sessionId: string): boolean {
    const session = this.#sessions.get(sessionId);
    if (!session) return false;
    this.#tag(sessionId, session, {});
    return this.#sessions.delete(sessionId);
  }

  #scope(scope: string): Map<string, string> {
    let values = this.#state.get(scope);
    if (!values) {
      values = new Map();
      this.#state.set(scope, values);
    }
    return values;
  }
}

/** A tag as the index names it: a key cannot hold NUL, so NUL divides it from its value. */
function tagKey(key: string, value: string): string {
  return `${key}\0${value}`;
}

function withoutTranscript({
  transcript: _,
  needs: __,
  ...stored
}: MemoryCheckpoint): StoredCheckpoint {
  return stored;
}
