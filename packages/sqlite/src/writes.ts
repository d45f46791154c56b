/**
 * The SQLite backend's mutations. Each is a transaction of its own statements, run without
 * yielding (better-sqlite3 is synchronous) in BEGIN IMMEDIATE, so a writer takes the
 * database's write lock before it reads what it will change, and several processes on one file
 * serialise their writes instead of deadlocking. The backend names them in write calls
 * (write-call.ts), which the connection that writes runs: the event loop's, or the writer
 * thread's. Data and transcript items are turned into the bytes their columns hold here, on
 * the connection that writes, so a call posted to the thread carries the text core handed over.
 */
import {
  type AppendInput,
  type AppendResult,
  closeOverNeeds,
  type DeleteIdleResult,
  type ForkInput,
  type ForkResult,
  type ImportInput,
  type PruneRule,
  type RewriteInput,
  type RollbackInput,
  type RollbackResult,
  storedBytesOf,
} from '@ckpt/core/adapter';
import {
  appendBytes,
  type CheckpointRow,
  checkpointFromRow,
  importedSessionRow,
  rewriteBytes,
  rewriteValues,
  type SqlReads,
  type SqlWrites,
  tagsArg,
} from '@ckpt/core/sql';
import type Database from 'better-sqlite3';
import { prepare, rowsOf, type SqliteStatement } from './runner.js';
import type { tables } from './schema.js';
import { mutations, PLUCKED, removals } from './statements.js';
import type { Transactions, WriteCall } from './write-call.js';

/** A checkpoint's row, where its data and transcript items are named by the ids of their rows. */
interface CheckpointRefs {
  seq: number;
  parent: number | null;
  created_at: number;
  metadata: string;
  body: number;
  transcript: number | null;
}

/** Above every seq and every time: a bound of a prune rule that was not given. */
const NO_BOUND = Number.MAX_SAFE_INTEGER;

/** Each statement of a set, prepared on `db` as better-sqlite3 takes it. */
function prepareAll<K extends string>(
  db: Database.Database,
  texts: Record<K, string>,
): Record<K, Database.Statement> {
  const out = {} as Record<K, Database.Statement>;
  for (const name of Object.keys(texts) as K[]) out[name] = db.prepare(texts[name]);
  return out;
}

/**
 * The write transactions on `db`, by name: the mutations; `dropTables`, every table of the
 * namespace (`t`), the KV store's and the meta table included (other namespaces' tables in the
 * file, and the file, stay); and `statement`, one writing statement given as its SQL (with
 * `?`) and its values, for the state table's writes.
 */
export function sqliteTransactions(
  db: Database.Database,
  t: ReturnType<typeof tables>,
  reads: SqlReads<SqliteStatement>,
): Transactions {
  const { chainRefs, ...texts } = mutations(t);
  const sql = {
    ...prepareAll(db, texts),
    chainRefs: { sql: prepare(db, chainRefs.sql), args: chainRefs.args },
  };
  for (const name of PLUCKED) sql[name].pluck();
  // Built once: better-sqlite3 wraps a function in BEGIN IMMEDIATE … COMMIT (or ROLLBACK).
  const append = db.transaction((input: AppendInput): AppendResult => {
    const id = input.sessionId;
    const session = sql.headOf.get(id) as { head: number; last_seq: number } | undefined;
    if (session && input.idempotencyKey !== undefined) {
      const seen = sql.idempotent.get(id, input.idempotencyKey) as { seq: number } | undefined;
      if (seen) {
        const [row] = rowsOf<CheckpointRow>(
          reads.loadSeq.sql,
          reads.loadSeq.args({ sessionId: id, seq: seen.seq }),
        );
        return {
          status: 'replayed',
          seq: seen.seq,
          checkpoint: row ? checkpointFromRow(row) : null,
        };
      }
    }
    const head = session?.head ?? null;
    if (input.expectedHead !== undefined && input.expectedHead !== head) {
      return { status: 'conflict', head };
    }
    const seq = (session?.last_seq ?? 0) + 1;
    if (input.needs.length > 0) {
      sql.recordNeeds.run({ id, seq, needs: JSON.stringify(input.needs) });
    }
    const body = sql.insertBody.run(storedBytesOf(input.data)).lastInsertRowid;
    const transcript =
      input.transcript === '[]'
        ? null
        : sql.insertTranscript.run(storedBytesOf(input.transcript)).lastInsertRowid;
    sql.insertCheckpoint.run(id, seq, head, input.now, input.metadata, body, transcript);
    const now = input.now;
    sql.upsertSession.run(id, seq, seq, head, now, body, input.metadata, now, now);
    if (input.tags !== undefined) sql.setTags.run(tagsArg(input.tags), id);
    if (input.idempotencyKey !== undefined) {
      sql.insertIdempotency.run(id, input.idempotencyKey, seq);
    }
    return { status: 'written', seq, parent: head };
  });

  const rollback = db.transaction((input: RollbackInput): RollbackResult => {
    const session = sql.headOf.get(input.sessionId) as { head: number } | undefined;
    if (!session) return { status: 'not_found', missing: 'session' };
    if (input.expectedHead !== undefined && input.expectedHead !== session.head) {
      return { status: 'conflict', head: session.head };
    }
    const target = sql.checkpointRow.get(input.sessionId, input.seq) as CheckpointRefs | undefined;
    if (!target) return { status: 'not_found', missing: 'seq' };
    const { seq, parent, created_at, body, metadata } = target;
    sql.moveHead.run(seq, parent, created_at, body, metadata, input.now, input.sessionId);
    return { status: 'done' };
  });

  const fork = db.transaction((input: ForkInput): ForkResult => {
    const source = sql.headOf.get(input.sessionId) as { head: number } | undefined;
    if (!source) return { status: 'not_found', missing: 'session' };
    const at = input.atSeq ?? source.head;
    if (!sql.checkpointRow.get(input.sessionId, at)) return { status: 'not_found', missing: 'seq' };
    if (sql.headOf.get(input.newId)) return { status: 'exists' };
    const rows = rowsOf<CheckpointRefs>(
      sql.chainRefs.sql,
      sql.chainRefs.args({
        sessionId: input.sessionId,
        fromSeq: at,
        limit: Number.MAX_SAFE_INTEGER,
      }),
    );
    if (sql.hasNeeds.get(input.sessionId)) {
      // What the copied checkpoints need comes along, and what that needs in turn.
      const chain = new Set(rows.map((row) => row.seq));
      const needsOf = (seq: number) => sql.needsOf.all(input.sessionId, seq) as number[];
      for (const seq of closeOverNeeds(chain, needsOf)) {
        if (chain.has(seq)) continue;
        const row = sql.checkpointRow.get(input.sessionId, seq) as CheckpointRefs | undefined;
        if (row) rows.push(row);
      }
      const copied = JSON.stringify(rows.map((row) => row.seq));
      sql.copyNeeds.run({ newId: input.newId, id: input.sessionId, copied });
    }
    // Each copy gets bodies of its own, so that nothing the two sessions do later is shared.
    let headBody = 0;
    for (const row of rows) {
      const body = sql.copyBody.run(row.body).lastInsertRowid;
      const transcript =
        row.transcript === null ? null : sql.copyTranscript.run(row.transcript).lastInsertRowid;
      sql.insertCheckpoint.run(
        input.newId,
        row.seq,
        row.parent,
        row.created_at,
        row.metadata,
        body,
        transcript,
      );
      if (row.seq === at) headBody = Number(body);
    }
    const top = rows[0]!;
    sql.insertFork.run({
      newId: input.newId,
      id: input.sessionId,
      at,
      count: rows.length,
      parent: top.parent,
      createdAt: top.created_at,
      body: headBody,
      metadata: top.metadata,
      now: input.now,
    });
    return { status: 'done', seq: at };
  });

  const prune = db.transaction((sessionId: string, rule: PruneRule, dryRun: boolean): number => {
    const session = sql.headOf.get(sessionId) as { head: number } | undefined;
    if (!session) return 0;
    // What the rule lets go lies below the keepLast-th highest seq and before the cutoff.
    let below = NO_BOUND;
    if (rule.keepLast !== null) {
      const lowestKept = sql.pruneThreshold.get(sessionId, rule.keepLast - 1) as
        | { seq: number }
        | undefined;
      if (!lowestKept) return 0;
      below = lowestKept.seq;
    }
    const before = rule.createdBefore ?? NO_BOUND;
    let needed: number[] = [];
    const withNeeds = sql.hasNeeds.get(sessionId) !== undefined;
    if (withNeeds) {
      const roots = [
        ...(sql.pruneRoots.all({ id: sessionId, below, before }) as number[]),
        session.head,
      ];
      const needsOf = (seq: number) => sql.needsOf.all(sessionId, seq) as number[];
      needed = [...closeOverNeeds(roots, needsOf)];
    }
    const gone = sql.pruneGone.all({
      id: sessionId,
      below,
      before,
      head: session.head,
      needed: JSON.stringify(needed),
    }) as number[];
    if (dryRun || gone.length === 0) return gone.length;
    const range = { id: sessionId, gone: JSON.stringify(gone) };
    sql.pruneBodies.run(range);
    sql.pruneTranscripts.run(range);
    sql.pruneCheckpoints.run(range);
    if (withNeeds) sql.pruneNeeds.run(range);
    sql.countDown.run(gone.length, sessionId);
    return gone.length;
  });

  // One transaction and one commit for the batch. A session with pins or needs is pruned as on
  // its own; the rest, most sessions, take a few statements for the whole batch.
  const pruneBatch = db.transaction(
    (sessionIds: readonly string[], rule: PruneRule, dryRun: boolean): number => {
      const ids = JSON.stringify(sessionIds);
      let removed = 0;
      for (const sessionId of sql.pruneBatchEach.all({ ids }) as string[]) {
        removed += prune(sessionId, rule, dryRun);
      }
      const gone = sql.pruneBatchGone.all({
        ids,
        skip: rule.keepLast === null ? null : rule.keepLast - 1,
        noBound: NO_BOUND,
        before: rule.createdBefore ?? NO_BOUND,
      }) as { session_id: string; seq: number; body: number; transcript: number | null }[];
      if (dryRun || gone.length === 0) return removed + gone.length;
      const counts = new Map<string, number>();
      for (const row of gone) counts.set(row.session_id, (counts.get(row.session_id) ?? 0) + 1);
      sql.pruneBatchBodies.run(JSON.stringify(gone.map((row) => row.body)));
      sql.pruneBatchTranscripts.run(
        JSON.stringify(gone.flatMap((row) => (row.transcript === null ? [] : [row.transcript]))),
      );
      sql.pruneBatchCheckpoints.run(JSON.stringify(gone.map((row) => [row.session_id, row.seq])));
      for (const [sessionId, count] of counts) sql.countDown.run(count, sessionId);
      return removed + gone.length;
    },
  );

  const pin = db.transaction((input: { sessionId: string; seq: number; note: string | null }) => {
    const { sessionId, seq, note } = input;
    if (!sql.headOf.get(sessionId)) return { status: 'not_found', missing: 'session' } as const;
    if (!sql.checkpointRow.get(sessionId, seq)) {
      return { status: 'not_found', missing: 'seq' } as const;
    }
    if (sql.isPinned.get(sessionId, seq) === undefined) {
      sql.insertPin.run(sessionId, seq, note);
      sql.countPins.run(1, sessionId);
    } else {
      sql.renotePin.run(note, sessionId, seq);
    }
    return { status: 'done' } as const;
  });

  const unpin = db.transaction((sessionId: string, seq: number): boolean => {
    if (sql.deletePin.run(sessionId, seq).changes === 0) return false;
    sql.countPins.run(-1, sessionId);
    return true;
  });

  const removing = removals(t);
  const removeOne = removing.one.map((text) => db.prepare(text));
  const removeBatch = removing.batch.map((text) => db.prepare(text));
  /** Run each removal with `ids`; how many session rows went. */
  const removeWith = (statements: Database.Statement[], ids: string) =>
    statements.reduce((_, statement) => statement.run(ids).changes, 0);

  const remove = db.transaction(
    (sessionId: string): boolean => removeWith(removeOne, sessionId) > 0,
  );

  const deleteIdle = db.transaction(
    (sessionId: string, idleBefore: number, dryRun: boolean): DeleteIdleResult => {
      const idle = sql.idleSession.get(sessionId, idleBefore) as
        | { checkpoints: number }
        | undefined;
      if (!idle) return { status: 'kept' };
      if (!dryRun) remove(sessionId);
      return { status: 'deleted', checkpoints: idle.checkpoints };
    },
  );

  // One transaction: the batch is chosen and removed under the write lock, so a session written
  // meanwhile is either written before (and not idle) or after (and created anew).
  const deleteIdleBatch = db.transaction((idleBefore: number, limit: number) => {
    const batch = sql.idleBatch.all(idleBefore, limit) as { id: string; checkpoints: number }[];
    if (batch.length === 0) return { sessions: 0, checkpoints: 0 };
    removeWith(removeBatch, JSON.stringify(batch.map((row) => row.id)));
    let checkpoints = 0;
    for (const row of batch) checkpoints += row.checkpoints;
    return { sessions: batch.length, checkpoints };
  });

  const importSession = db.transaction((input: ImportInput): 'imported' | 'exists' => {
    const id = input.sessionId;
    if (sql.headOf.get(id)) {
      if (!input.replace) return 'exists';
      remove(id);
    }
    let headBody = 0;
    for (const cp of input.checkpoints) {
      const body = sql.insertBody.run(storedBytesOf(cp.data)).lastInsertRowid;
      const transcript =
        cp.transcript === '[]'
          ? null
          : sql.insertTranscript.run(storedBytesOf(cp.transcript)).lastInsertRowid;
      sql.insertCheckpoint.run(id, cp.seq, cp.parent, cp.createdAt, cp.metadata, body, transcript);
      for (const needed of cp.needs) sql.insertNeed.run(id, cp.seq, needed);
      if (cp.pinned) sql.insertPin.run(id, cp.seq, cp.pinNote);
      if (cp.seq === input.head) headBody = Number(body);
    }
    sql.insertImported.run({ ...importedSessionRow(input), head_body: headBody });
    return 'imported';
  });
  const setTags = db.transaction(
    (sessionId: string, tags: string | null): boolean =>
      sql.setTags.run(tags, sessionId).changes > 0,
  );
  const rewrite = db.transaction((input: RewriteInput): boolean => {
    const values = rewriteBytes(rewriteValues(input));
    if (sql.rewriteBody.run(values).changes === 0) return false;
    sql.rewriteTranscript.run(values);
    return true;
  });
  const dropTables = db.transaction(() => {
    for (const table of Object.values(t)) db.exec(`DROP TABLE IF EXISTS ${table}`);
    // sqliteKv's log of its writes (kv.ts), which SQL_TABLES, shared with the servers, lacks.
    db.exec(`DROP TABLE IF EXISTS ${t.kv}_changes`);
  });
  // Prepared once per text: the state table's writes are a handful of statements.
  const prepared = new Map<string, Database.Statement>();
  const statement = db.transaction((text: string, values: unknown[]) => {
    let found = prepared.get(text);
    if (!found) {
      found = db.prepare(text);
      prepared.set(text, found);
    }
    return { rows: [], changed: found.run(...values).changes };
  });
  return {
    append,
    rollback,
    fork,
    prune,
    pruneBatch,
    delete: remove,
    pin,
    unpin,
    deleteIdle,
    deleteIdleBatch,
    importSession,
    setTags,
    rewrite,
    dropTables,
    statement,
  };
}

/** Run a write call; `bytes` is its payload's size, for the bounds of a group. */
export type Write = <T>(call: WriteCall, bytes?: number) => Promise<T>;

/** The mutations as write calls, and the dropping of the namespace's tables. */
export function sqliteWrites(write: Write): { writes: SqlWrites; dropTables(): Promise<void> } {
  return {
    writes: {
      append: (input) => write({ name: 'append', args: [input] }, appendBytes(input)),
      rollback: (input) => write({ name: 'rollback', args: [input] }),
      fork: (input) => write({ name: 'fork', args: [input] }),
      prune: (sessionId, rule, dryRun = false) =>
        write({ name: 'prune', args: [sessionId, rule, dryRun] }),
      pruneBatch: (sessionIds, rule, dryRun) =>
        write({ name: 'pruneBatch', args: [sessionIds, rule, dryRun] }),
      delete: (sessionId) => write({ name: 'delete', args: [sessionId] }),
      pin: (input) => write({ name: 'pin', args: [input] }),
      unpin: (sessionId, seq) => write({ name: 'unpin', args: [sessionId, seq] }),
      deleteIdle: (sessionId, idleBefore, dryRun) =>
        write({ name: 'deleteIdle', args: [sessionId, idleBefore, dryRun] }),
      deleteIdleBatch: ({ idleBefore, limit }) =>
        write({ name: 'deleteIdleBatch', args: [idleBefore, limit] }),
      importSession: (input) => {
        let bytes = 0;
        for (const cp of input.checkpoints) bytes += appendBytes(cp);
        return write({ name: 'importSession', args: [input] }, bytes);
      },
      // Posted as the column holds them: JSON text (null: none).
      setTags: (sessionId, tags) => write({ name: 'setTags', args: [sessionId, tagsArg(tags)] }),
      rewriteCheckpoint: (input) =>
        write({ name: 'rewrite', args: [input] }, appendBytes({ ...input.to, metadata: '' })),
    },
    dropTables: () => write({ name: 'dropTables', args: [] }),
  };
}
