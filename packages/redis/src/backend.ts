/**
 * The native Redis backend, wired to this package's parts: the client it opens or is given
 * (connection.ts), the namespace's marker (migrate.ts), the reads (reads.ts), the mutations
 * (writes.ts), the state scopes (state.ts), and what diagnose() checks (diagnose.ts).
 */
import {
  type AdapterOpening,
  type AppendInput,
  type AppendResult,
  afterReady,
  type ChangesPage,
  type CheckpointBackend,
  type DeleteIdleResult,
  type Diagnosis,
  type ExportedStoredCheckpoint,
  type ForkInput,
  type ForkResult,
  type ImportInput,
  type Leftovers,
  openAdapter,
  type PinResult,
  type PruneRule,
  pruneSideBySide,
  type RewriteInput,
  type RollbackInput,
  type RollbackResult,
  type SessionPosition,
  type StoredCheckpoint,
  type StoredCheckpointInfo,
  type StoredLineageEntry,
  type StoredSession,
  type Tags,
} from '@ckpt/core/adapter';
import { redisChangeLog } from './change-log.js';
import { listenForChanges } from './change-wakes.js';
import { connect, disconnect, type RedisOptions } from './connection.js';
import { dropNamespace } from './destroy.js';
import { diagnose } from './diagnose.js';
import { redisErrorHint } from './error-hints.js';
import { findNamespace, LayoutMark, markNamespace } from './migrate.js';
import * as reads from './reads.js';
import type { RedisClient } from './runner.js';
import { scopeState } from './state.js';
import { deleteIdleBatch } from './sweep.js';
import * as writes from './writes.js';

/** The Redis backend (see `redis()`). */
export class RedisBackend implements CheckpointBackend {
  readonly name = 'redis';
  readonly capabilities = {
    concurrentWriters: true,
    listSessions: true,
    listStateKeys: true,
    watch: true,
    tags: true,
  };
  readonly namespace: string;
  /** The client commands run on. */
  readonly client: RedisClient;
  readonly #opening: AdapterOpening<void>;
  readonly #layout: LayoutMark;
  readonly #changeLog: ReturnType<typeof redisChangeLog>;
  /** What stops each subscription to the change channels that is on (see change-wakes.ts). */
  readonly #listening = new Set<() => Promise<void>>();
  /** The reads of the change log under way, which close waits for (see close). */
  readonly #changeReads = new Set<Promise<unknown>>();

  constructor(options: RedisOptions) {
    const connection = connect(options);
    const { client, namespace, existing } = connection;
    this.client = client;
    this.namespace = namespace;
    // A marker that could not be written now is written by the next write of a value (see
    // LayoutMark); the calls report a connection that fails them. A client quit under the
    // marker on its way would drop it, and leave a store that was opened and never written not
    // found by `create: false`: close waits for it.
    this.#layout = new LayoutMark(
      client,
      namespace,
      existing ? findNamespace(client, namespace, existing) : markNamespace(client, namespace),
    );
    this.#changeLog = redisChangeLog(this);
    this.#opening = openAdapter(
      () => this.#layout.marked(),
      async () => {
        // The subscribed connections are the store's own, whoever gave the client. A read of
        // the change log is two rounds of commands that the store does not count as its calls
        // (its watchers' one reader makes them): the client is left only once they are done,
        // so that none is sent after the client was quit.
        await Promise.all([...this.#listening].map((stop) => stop()));
        await Promise.allSettled([...this.#changeReads]);
        await disconnect(connection);
      },
    );
    // With create: false nothing may reach the namespace before it is found: a write would
    // make a store where there was none.
    // biome-ignore lint/correctness/noConstructorReturn: this same instance, its calls held back
    if (existing) return afterReady(this, this.#opening.migrated);
  }

  /**
   * Resolves once the namespace is marked as a store (or, with `create: false`, found);
   * rejects with NOT_FOUND when `create: false` found nothing of it.
   */
  ready(): Promise<void> {
    return this.#opening.ready();
  }

  append(input: AppendInput): Promise<AppendResult> {
    return this.#storing(() => writes.append(this, input));
  }

  load(sessionId: string, seq: number | null): Promise<StoredCheckpoint | null> {
    return reads.load(this, sessionId, seq);
  }

  loadByKey(sessionId: string, idempotencyKey: string): Promise<StoredCheckpoint | null> {
    return reads.loadByKey(this, sessionId, idempotencyKey);
  }

  session(sessionId: string): Promise<StoredSession | null> {
    return reads.session(this, sessionId);
  }

  listCheckpoints(
    sessionId: string,
    query: { beforeSeq: number | null; limit: number },
  ): Promise<StoredCheckpointInfo[]> {
    return reads.listCheckpoints(this, sessionId, query);
  }

  lineage(
    sessionId: string,
    query: { fromSeq: number | null; limit: number; transcript: boolean },
  ): Promise<StoredLineageEntry[]> {
    return reads.lineage(this, sessionId, query);
  }

  rollback(input: RollbackInput): Promise<RollbackResult> {
    return writes.rollback(this, input);
  }

  fork(input: ForkInput): Promise<ForkResult> {
    return this.#storing(() => writes.fork(this, input));
  }

  prune(sessionId: string, rule: PruneRule, dryRun?: boolean): Promise<number> {
    return writes.prune(this, sessionId, rule, dryRun);
  }

  /** Each session's prune script, all sent at once: one pipeline, not a round trip each. */
  pruneBatch(sessionIds: readonly string[], rule: PruneRule, dryRun: boolean): Promise<number> {
    return pruneSideBySide((id, r, dry) => this.prune(id, r, dry), sessionIds, rule, dryRun);
  }

  delete(sessionId: string): Promise<boolean> {
    return writes.deleteSession(this, sessionId);
  }

  pin(input: { sessionId: string; seq: number; note: string | null }): Promise<PinResult> {
    return writes.pin(this, input);
  }

  unpin(sessionId: string, seq: number): Promise<boolean> {
    return writes.unpin(this, sessionId, seq);
  }

  deleteIdle(sessionId: string, idleBefore: number, dryRun: boolean): Promise<DeleteIdleResult> {
    return writes.deleteIdle(this, sessionId, idleBefore, dryRun);
  }

  /** Sweeps' native help: one script per shard for a page of the oldest idle sessions (see sweep.ts). */
  deleteIdleBatch(query: {
    idleBefore: number;
    limit: number;
  }): Promise<{ sessions: number; checkpoints: number }> {
    return deleteIdleBatch(this, query);
  }

  sessions(query: {
    after: SessionPosition | null;
    limit: number;
    prefix: string;
    where?: Tags;
  }): Promise<StoredSession[]> {
    return reads.sessions(this, query);
  }

  /** One script on the session's slot: its hash and its entries in the tag index. */
  setTags(sessionId: string, tags: Tags): Promise<boolean> {
    return this.#storing(() => writes.setTags(this, sessionId, tags));
  }

  exportCheckpoints(
    sessionId: string,
    query: { afterSeq: number | null; limit: number },
  ): Promise<ExportedStoredCheckpoint[]> {
    return reads.exportCheckpoints(this, sessionId, query);
  }

  importSession(input: ImportInput): Promise<'imported' | 'exists'> {
    return this.#storing(() => writes.importSession(this, input));
  }

  rewriteCheckpoint(input: RewriteInput): Promise<boolean> {
    return this.#storing(() => writes.rewriteCheckpoint(this, input));
  }

  stateScopes(query: { after: string | null; limit: number }): Promise<string[]> {
    return reads.stateScopes(this, query);
  }

  stateGet(scope: string, key: string): Promise<string | undefined> {
    return scopeState(this, scope).get(key);
  }

  stateSet(scope: string, key: string, value: string): Promise<void> {
    return this.#storing(() => scopeState(this, scope).set(key, value));
  }

  stateDelete(scope: string, key: string): Promise<boolean> {
    return scopeState(this, scope).delete(key);
  }

  stateCompareAndSet(
    scope: string,
    key: string,
    expected: string | null,
    value: string,
  ): Promise<boolean> {
    return this.#storing(() => scopeState(this, scope).compareAndSet(key, expected, value));
  }

  stateKeys(
    scope: string,
    query: { prefix: string; after: string | null; limit: number },
  ): Promise<string[]> {
    return scopeState(this, scope).keys(query.prefix, query.after, query.limit);
  }

  /**
   * The changes after `after`, merged from the shards' streams up to a horizon that no later
   * change can go under (see change-log.ts).
   */
  changes(query: { after: string | null; limit: number }): Promise<ChangesPage | 'expired'> {
    const read = this.#changeLog.changes(query);
    const settled = () => this.#changeReads.delete(read);
    this.#changeReads.add(read);
    read.then(settled, settled);
    return read;
  }

  /** Wake `wake` at each change, from any process (see change-wakes.ts); resolves once subscribed. */
  async onChanges(wake: () => void): Promise<() => Promise<void>> {
    const stop = await listenForChanges(this.client, this.namespace, wake);
    const stopOnce = async () => {
      this.#listening.delete(stopOnce);
      await stop();
    };
    this.#listening.add(stopOnce);
    return stopOnce;
  }

  /** The server's persistence and eviction settings, which decide what a resolved call survives. */
  diagnose(): Promise<Diagnosis[]> {
    return diagnose(this.client);
  }

  /** Where Redis keeps the values a rewrite or delete replaced: only in its persistence files. */
  leftovers(): Leftovers {
    return {
      remain:
        "Nothing remains in Redis's memory: each value was replaced. Where persistence is on, the RDB snapshot and the AOF file hold the replaced values until the next snapshot (BGSAVE) or AOF rewrite (BGREWRITEAOF), and backups made before keep them.",
    };
  }

  /** Remove every key of the namespace, the marker and `redisKv`'s included (see destroy.ts). */
  destroy(): Promise<void> {
    return dropNamespace(this.client, this.namespace);
  }

  /** What to do about a refusal of Redis's own (a login it refused). */
  errorHint(err: unknown): string | undefined {
    return redisErrorHint(err);
  }

  close(): Promise<void> {
    return this.#opening.close();
  }

  /** Run a write that stores a value once the marker names this layout version (see LayoutMark). */
  async #storing<T>(write: () => Promise<T>): Promise<T> {
    await this.#layout.marked();
    return write();
  }
}
