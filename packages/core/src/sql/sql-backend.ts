/**
 * The native backend of a SQL database, written once for SQLite, PostgreSQL and MySQL, and built
 * from the parts an adapter hands it: how a statement runs, its reads, its writes, its state
 * table, and how it opens and closes. It only ever calls down into those parts: it decides
 * which read a call takes and what the rows mean; each statement decides what its parameters
 * are (see statement.ts).
 */

import type {
  AppendInput,
  AppendResult,
  ChangeLog,
  CheckpointBackend,
  DeleteIdleResult,
  Diagnosis,
  ExportedStoredCheckpoint,
  ForkInput,
  ForkResult,
  ImportInput,
  PinResult,
  PruneRule,
  RewriteInput,
  RollbackInput,
  RollbackResult,
  SessionPosition,
  StoredCheckpoint,
  StoredCheckpointInfo,
  StoredLineageEntry,
  StoredSession,
  Tags,
} from '../adapter/backend.js';
import type { AdapterOpening } from '../adapter/open-adapter.js';
import { sessionIdPrefixBound } from '../adapter/order.js';
import { pruneSideBySide } from '../adapter/prune-batch.js';
import { textFromStoredBytes } from '../adapter/stored-bytes.js';
import type { ErrorHint } from '../values/errors.js';
import { retrying, type SqlDriver } from './driver.js';
import { type IdChangeLogReads, idChangeLog } from './id-change-log.js';
import { countInFlight } from './in-flight.js';
import { type KeyValueStatements, KeyValueTable, type ValueColumn } from './key-value-table.js';
import {
  type CheckpointRow,
  checkpointFromRow,
  checkpointInfoFromRow,
  type LineageRow,
  lineageFromRow,
  needsFromColumn,
  type SessionRow,
  type StoredValue,
  sessionFromRow,
} from './rows.js';
import type { RunStatement } from './run.js';
import type { SqlStatement } from './statement.js';
import { type BatchCounts, type SqlWriteStatements, statementWrites } from './statement-writes.js';

/** A page of sessions after one: the last session of the page before. */
type After = { updatedAt: number; sessionId: string };
/** The sessions whose ids are `prefix <= id < bound` (see sessionIdPrefixBound). */
type Range = { prefix: string; bound: string };

/** A SQL backend's reads, by name, each with the input it is given and the rows it returns. */
export interface SqlReads<S> {
  /** The head's row: seq, parent, created_at, metadata, data, pinned, pin_note. */
  loadHead: SqlStatement<S, { sessionId: string }>;
  /** As loadHead, for the checkpoint `seq`. */
  loadSeq: SqlStatement<S, { sessionId: string; seq: number }>;
  /** As loadHead, for the checkpoint appended with that key. */
  loadByKey: SqlStatement<S, { sessionId: string; idempotencyKey: string }>;
  /** The session's row. */
  session: SqlStatement<S, { sessionId: string }>;
  /** Rows without data (with pinned, pin_note), seq descending, below `beforeSeq` (null: all). */
  listCheckpoints: SqlStatement<S, { sessionId: string; beforeSeq: number | null; limit: number }>;
  /** From `fromSeq` (null: the head) along the parents, newest first; transcripts when asked. */
  lineage: SqlStatement<
    S,
    { sessionId: string; fromSeq: number | null; limit: number; transcript: boolean }
  >;
  /** Session rows, updated_at then id descending. */
  sessionsFirst: SqlStatement<S, { limit: number }>;
  /** As sessionsFirst, after a session. */
  sessionsAfter: SqlStatement<S, After & { limit: number }>;
  /** As sessionsFirst, of the sessions in a range of ids, found by a range of the index on ids. */
  prefixSessionsFirst: SqlStatement<S, Range & { limit: number }>;
  /** As prefixSessionsFirst, after a session. */
  prefixSessionsAfter: SqlStatement<S, Range & After & { limit: number }>;
  /**
   * Whole checkpoints after `afterSeq` (null: from the first), seq ascending: seq, parent,
   * created_at, metadata, data, pinned, pin_note, transcript (`[]` when none), needs (JSON text of an array of
   * the seqs it needs; null or `[]` when none).
   */
  exportCheckpoints: SqlStatement<S, { sessionId: string; afterSeq: number | null; limit: number }>;
  /** `scope` of each scope with a state key after `after` (null: from the first), ascending. */
  stateScopes: SqlStatement<S, { after: string | null; limit: number }>;
  /**
   * Optional, with the `setTags` procedure or write: the statement of a page of the sessions
   * that have every tag of `where` (as sessionsFirst: session rows, updated_at then id
   * descending), for a query of this shape: how many pairs, whether a prefix (a range of ids)
   * and whether a position to start after. Read through the tag index, in the listing's order.
   */
  taggedSessions?(shape: TaggedShape): SqlStatement<S, TaggedQuery>;
}

/** The shape of a tagged listing, which picks its statement (see SqlReads.taggedSessions). */
export interface TaggedShape {
  /** How many pairs `where` has (1 to MAX_TAGS). */
  pairs: number;
  prefix: boolean;
  after: boolean;
}

/** What a tagged listing's statement is given. */
export interface TaggedQuery {
  /** The pairs, in the order the caller gave them: walk the index of the first. */
  where: [key: string, value: string][];
  /** With a prefix: the ids `prefix <= id < bound`; else both ''. */
  prefix: string;
  bound: string;
  /** With a position: the last session of the page before; else null. */
  after: After | null;
  limit: number;
}

/** A SQL backend's reads, with those of a change log whose ids come in commit order. */
export type SqlReadsWithChanges<S> = SqlReads<S> & Partial<IdChangeLogReads<S>>;

/**
 * A SQL backend's mutations: statements core runs (statement-writes.ts), or transactions the
 * adapter runs itself. Every SQL backend deletes a batch of idle sessions in one step.
 */
export type SqlWrites = Required<
  Pick<
    CheckpointBackend,
    | 'append'
    | 'rollback'
    | 'fork'
    | 'prune'
    | 'delete'
    | 'importSession'
    | 'pin'
    | 'unpin'
    | 'deleteIdle'
    | 'deleteIdleBatch'
    | 'rewriteCheckpoint'
  >
> &
  Pick<CheckpointBackend, 'pruneBatch' | 'setTags'>;

/** The parts a `SqlBackend` is built from. */
export interface SqlBackendParts<S> {
  name: string;
  /** How its statements run (see SqlDriver). */
  driver: SqlDriver<S>;
  /**
   * Its reads, its state table's statements (keyed by scope and key), and its mutations as
   * statements, which core runs (see SqlWriteStatements).
   */
  statements: {
    reads: SqlReadsWithChanges<S>;
    state: KeyValueStatements<S>;
    writes?: SqlWriteStatements<S>;
  };
  /**
   * Its change log, where its ids do not come in commit order (see ChangeLog); else, with
   * `changesPage` among its reads, core reads the log by id. `changed` is
   * called after each write of this backend has committed (to wake watchers elsewhere).
   */
  changeLog?: ChangeLog & { changed?(): void };
  /** How often watchers read a log core reads by id (see changeLog); default core's. */
  changesPollMs?: number;
  /**
   * Mutations the adapter runs itself, in place of statements: each transaction of SQLite's,
   * MySQL's import. With `statements.writes`, those it leaves out (importSession); without,
   * every one.
   */
  writes?: Partial<SqlWrites>;
  /**
   * Whether checkpoints that would wait for a connection of the driver's pool go together
   * (group commit); default true. Needs `driver.connections` and `statements.writes.appendBatch`.
   */
  groupCommit?: boolean;
  /**
   * What its value columns (data, transcript items, state values) hold: bytes, once its schema
   * made them bytes, or text. Its write statements store values in that form themselves
   * (`storedBytesOf`); every read takes either.
   */
  valueColumns?: ValueColumn;
  /** How it opens and closes (see `openAdapter`). */
  opening: Pick<AdapterOpening<unknown>, 'ready' | 'close'>;
  /** Remove the namespace's tables and stored code; called once the store is ready. */
  destroy(): Promise<void>;
  /** Called once the store is ready. */
  diagnose(): Promise<Diagnosis[]>;
  errorHint?: ErrorHint;
}

/** Every mutation a SQL backend has, statements or its own (see SqlWrites). */
export const WRITES = [
  'append',
  'rollback',
  'fork',
  'prune',
  'delete',
  'importSession',
  'pin',
  'unpin',
  'deleteIdle',
  'deleteIdleBatch',
  'rewriteCheckpoint',
] as const satisfies readonly (keyof SqlWrites)[];

/** A SQL backend: the reads and state on one statement each, the rest as its parts say. */
export class SqlBackend<S> implements CheckpointBackend {
  readonly name: string;
  readonly capabilities: {
    concurrentWriters: true;
    listSessions: true;
    listStateKeys: true;
    watch: boolean;
    tags: boolean;
  };
  /** Its change log's, where it has one (see SqlBackendParts.changeLog). */
  declare readonly changes?: NonNullable<ChangeLog['changes']>;
  declare readonly onChanges?: NonNullable<ChangeLog['onChanges']>;
  declare readonly changesPollMs?: number;
  /** Where its statements keep tags (see SqlReads.taggedSessions). */
  declare readonly setTags?: NonNullable<CheckpointBackend['setTags']>;
  /**
   * What to do about a failure of the server's or the driver's. A function of its own rather
   * than a method on private state, so that a backend made with `Object.create(backend)` (a
   * wrapper) still has it.
   */
  declare readonly errorHint?: ErrorHint;
  readonly #run: RunStatement<S>;
  readonly #first: <Row>(statement: S, values: unknown[]) => Promise<Row | undefined>;
  readonly #reads: SqlReads<S>;
  readonly #state: KeyValueTable<S>;
  readonly #writes: SqlWrites;
  readonly #batched: () => BatchCounts;
  readonly #parts: SqlBackendParts<S>;
  /** The statements of tagged listings, by shape, made once each. */
  readonly #tagged = new Map<string, SqlStatement<S, TaggedQuery>>();
  /** Told after each state write, where the change log wants to know (see changeLog). */
  readonly #changed: (() => void) | undefined;

  constructor(parts: SqlBackendParts<S>) {
    const { driver, statements } = parts;
    // Where there is a pool, every statement counts while in flight: group commit reads the
    // count. Without one, nothing reads it, and a statement goes without the extra step.
    const retried = retrying(driver, driver.run);
    const counted = driver.connections
      ? countInFlight(retried)
      : { run: retried, inFlight: () => 0 };
    const run = counted.run;
    this.name = parts.name;
    this.#run = run;
    this.#first = driver.first
      ? driver.first.bind(driver)
      : async <Row>(statement: S, values: unknown[]) => (await run<Row>(statement, values)).rows[0];
    this.#reads = statements.reads;
    this.#state = new KeyValueTable(statements.state, run, parts.valueColumns);
    const fromStatements = statements.writes
      ? statementWrites(driver, counted, statements.writes, parts.groupCommit ?? true)
      : undefined;
    const writes: Partial<SqlWrites> = { ...fromStatements?.writes, ...parts.writes };
    const missing = WRITES.filter((name) => typeof writes[name] !== 'function');
    if (missing.length > 0) {
      throw new TypeError(
        `SqlBackend ${parts.name}: no ${missing.join(', ')}; give statements.writes, or writes of its own`,
      );
    }
    const changed = parts.changeLog?.changed?.bind(parts.changeLog);
    this.#writes = changed ? tellingChanges(writes as SqlWrites, changed) : (writes as SqlWrites);
    this.#changed = changed;
    this.#batched = fromStatements?.batched ?? (() => ({ batches: 0, calls: 0 }));
    this.#parts = parts;
    const { changesPage } = statements.reads;
    const log =
      parts.changeLog ??
      (changesPage ? idChangeLog(run, { changesPage }, parts.changesPollMs) : undefined);
    const setTags = this.#writes.setTags;
    const tags = setTags !== undefined && statements.reads.taggedSessions !== undefined;
    this.capabilities = {
      concurrentWriters: true,
      listSessions: true,
      listStateKeys: true,
      watch: log?.changes !== undefined,
      tags,
    };
    // An own property, as the log's methods: present only where the statements keep tags.
    if (tags) Object.assign(this, { setTags });
    if (log?.changes) {
      // Own properties, as errorHint's below: methods of the log, not of the class.
      Object.assign(this, {
        changes: log.changes.bind(log),
        ...(log.onChanges ? { onChanges: log.onChanges.bind(log) } : {}),
        ...(log.changesPollMs !== undefined ? { changesPollMs: log.changesPollMs } : {}),
      });
    }
    // An own property like any field's, which a wrapper (a Proxy that binds what it reads) may
    // hand out as it likes; absent where the adapter has no hints.
    if (parts.errorHint) {
      Object.defineProperty(this, 'errorHint', {
        value: parts.errorHint,
        writable: true,
        configurable: true,
        enumerable: true,
      });
    }
  }

  /**
   * How many batches of checkpoints that waited for a connection of the pool were sent, and
   * how many calls they carried (both 0 without group commit): to see whether the pool is
   * the bottleneck.
   */
  get batched(): BatchCounts {
    return this.#batched();
  }

  /** The checkpoint `statement` reads, or null. */
  async #readCheckpoint<In>(
    statement: SqlStatement<S, In>,
    input: In,
  ): Promise<StoredCheckpoint | null> {
    const row = await this.#first<CheckpointRow>(statement.sql, statement.args(input));
    return row ? checkpointFromRow(row) : null;
  }

  append(input: AppendInput): Promise<AppendResult> {
    return this.#writes.append(input);
  }

  load(sessionId: string, seq: number | null): Promise<StoredCheckpoint | null> {
    return seq === null
      ? this.#readCheckpoint(this.#reads.loadHead, { sessionId })
      : this.#readCheckpoint(this.#reads.loadSeq, { sessionId, seq });
  }

  loadByKey(sessionId: string, idempotencyKey: string): Promise<StoredCheckpoint | null> {
    return this.#readCheckpoint(this.#reads.loadByKey, { sessionId, idempotencyKey });
  }

  async session(sessionId: string): Promise<StoredSession | null> {
    const { session } = this.#reads;
    const row = await this.#first<SessionRow>(session.sql, session.args({ sessionId }));
    return row ? sessionFromRow(row) : null;
  }

  async listCheckpoints(
    sessionId: string,
    query: { beforeSeq: number | null; limit: number },
  ): Promise<StoredCheckpointInfo[]> {
    const read = this.#reads.listCheckpoints;
    const { beforeSeq, limit } = query;
    const { rows } = await this.#run<CheckpointRow>(
      read.sql,
      read.args({ sessionId, beforeSeq, limit }),
    );
    return rows.map(checkpointInfoFromRow);
  }

  async lineage(
    sessionId: string,
    query: { fromSeq: number | null; limit: number; transcript: boolean },
  ): Promise<StoredLineageEntry[]> {
    const read = this.#reads.lineage;
    const { fromSeq, limit, transcript } = query;
    const { rows } = await this.#run<LineageRow>(
      read.sql,
      read.args({ sessionId, fromSeq, limit, transcript }),
    );
    return rows.map(lineageFromRow);
  }

  async sessions(query: {
    after: SessionPosition | null;
    limit: number;
    prefix: string;
    where?: Tags;
  }): Promise<StoredSession[]> {
    const { after, limit, prefix } = query;
    const reads = this.#reads;
    const page = <In>(read: SqlStatement<S, In>, input: In) =>
      this.#run<SessionRow>(read.sql, read.args(input));
    const bound = prefix === '' ? '' : sessionIdPrefixBound(prefix);
    const where = Object.entries(query.where ?? {});
    if (where.length > 0) {
      const read = this.#taggedRead({
        pairs: where.length,
        prefix: prefix !== '',
        after: after !== null,
      });
      const { rows } = await page(read, { where, prefix, bound, after, limit });
      return rows.map(sessionFromRow);
    }
    const { rows } =
      prefix === ''
        ? after === null
          ? await page(reads.sessionsFirst, { limit })
          : await page(reads.sessionsAfter, { ...after, limit })
        : after === null
          ? await page(reads.prefixSessionsFirst, { prefix, bound, limit })
          : await page(reads.prefixSessionsAfter, { prefix, bound, ...after, limit });
    return rows.map(sessionFromRow);
  }

  /** The statement of a tagged listing of `shape`, made the first time it is asked for. */
  #taggedRead(shape: TaggedShape): SqlStatement<S, TaggedQuery> {
    const key = `${shape.pairs}:${shape.prefix}:${shape.after}`;
    let read = this.#tagged.get(key);
    if (!read) {
      read = this.#reads.taggedSessions!(shape);
      this.#tagged.set(key, read);
    }
    return read;
  }

  async exportCheckpoints(
    sessionId: string,
    query: { afterSeq: number | null; limit: number },
  ): Promise<ExportedStoredCheckpoint[]> {
    const read = this.#reads.exportCheckpoints;
    const { afterSeq, limit } = query;
    const { rows } = await this.#run<
      CheckpointRow & { transcript: StoredValue; needs: string | null }
    >(read.sql, read.args({ sessionId, afterSeq, limit }));
    return rows.map((row) => ({
      ...checkpointFromRow(row),
      transcript: textFromStoredBytes(row.transcript),
      needs: needsFromColumn(row.needs),
    }));
  }

  rewriteCheckpoint(input: RewriteInput): Promise<boolean> {
    return this.#writes.rewriteCheckpoint(input);
  }

  rollback(input: RollbackInput): Promise<RollbackResult> {
    return this.#writes.rollback(input);
  }

  fork(input: ForkInput): Promise<ForkResult> {
    return this.#writes.fork(input);
  }

  prune(sessionId: string, rule: PruneRule, dryRun = false): Promise<number> {
    return this.#writes.prune(sessionId, rule, dryRun);
  }

  /**
   * One statement where the adapter has one (PostgreSQL's), else the prunes side by side, so
   * that the pool runs them at once and the server commits them together.
   */
  pruneBatch(sessionIds: readonly string[], rule: PruneRule, dryRun: boolean) {
    if (sessionIds.length === 0) return Promise.resolve(0);
    const writes = this.#writes;
    if (writes.pruneBatch) return writes.pruneBatch(sessionIds, rule, dryRun);
    return pruneSideBySide((id, r, dry) => writes.prune(id, r, dry), sessionIds, rule, dryRun);
  }

  delete(sessionId: string): Promise<boolean> {
    return this.#writes.delete(sessionId);
  }

  importSession(input: ImportInput): Promise<'imported' | 'exists'> {
    return this.#writes.importSession(input);
  }

  pin(input: { sessionId: string; seq: number; note: string | null }): Promise<PinResult> {
    return this.#writes.pin(input);
  }

  unpin(sessionId: string, seq: number): Promise<boolean> {
    return this.#writes.unpin(sessionId, seq);
  }

  deleteIdle(sessionId: string, idleBefore: number, dryRun: boolean): Promise<DeleteIdleResult> {
    return this.#writes.deleteIdle(sessionId, idleBefore, dryRun);
  }

  deleteIdleBatch(query: {
    idleBefore: number;
    limit: number;
  }): Promise<{ sessions: number; checkpoints: number }> {
    return this.#writes.deleteIdleBatch(query);
  }

  async stateScopes(query: { after: string | null; limit: number }): Promise<string[]> {
    const read = this.#reads.stateScopes;
    const { rows } = await this.#run<{ scope: string }>(read.sql, read.args(query));
    return rows.map((row) => row.scope);
  }

  stateGet(scope: string, key: string): Promise<string | undefined> {
    return this.#state.get([scope, key]);
  }

  stateSet(scope: string, key: string, value: string): Promise<void> {
    return this.#told(this.#state.set([scope, key], value));
  }

  stateDelete(scope: string, key: string): Promise<boolean> {
    return this.#told(this.#state.delete([scope, key]));
  }

  stateCompareAndSet(
    scope: string,
    key: string,
    expected: string | null,
    value: string,
  ): Promise<boolean> {
    return this.#told(this.#state.compareAndSet([scope, key], expected, value));
  }

  /** `write`, telling the change log once it has settled. */
  #told<T>(write: Promise<T>): Promise<T> {
    return this.#changed ? write.finally(this.#changed) : write;
  }

  stateKeys(
    scope: string,
    query: { prefix: string; after: string | null; limit: number },
  ): Promise<string[]> {
    return this.#state.keys([scope], query);
  }

  /**
   * Resolves once the namespace is migrated (or, with `create: false`, found at this version);
   * rejects with SCHEMA when it cannot be, or NOT_FOUND when `create: false` found no store.
   */
  ready(): Promise<void> {
    return this.#parts.opening.ready();
  }

  /** Remove the namespace's tables and stored code (the adapter's README says what stays). */
  async destroy(): Promise<void> {
    await this.#parts.opening.ready();
    return this.#parts.destroy();
  }

  /** The schema version, the server's durability settings, and what a store needs of it. */
  async diagnose(): Promise<Diagnosis[]> {
    await this.#parts.opening.ready();
    return this.#parts.diagnose();
  }

  close(): Promise<void> {
    return this.#parts.opening.close();
  }
}

/** `writes`, each calling `changed` once it has settled (a write that failed may have changed nothing, and waking costs little). */
function tellingChanges(writes: SqlWrites, changed: () => void): SqlWrites {
  const telling: Partial<Record<keyof SqlWrites, unknown>> = {};
  for (const [name, write] of Object.entries(writes) as [keyof SqlWrites, unknown][]) {
    telling[name] =
      typeof write === 'function'
        ? (...args: unknown[]) =>
            (write as (...a: unknown[]) => Promise<unknown>)(...args).finally(changed)
        : write;
  }
  return telling as SqlWrites;
}
