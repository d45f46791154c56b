/**
 * The SQLite backend's mutations. Each is a transaction of its own statements, run without
 * yielding (better-sqlite3 is synchronous) in BEGIN IMMEDIATE, so a writer takes the
 * database's write lock before it reads what it will change, and several processes on one file
 * serialise their writes instead of deadlocking. The mutations that wait at the same moment
 * commit together (group commit), unless it is off.
 */
import {
  type AppendInput,
  type AppendResult,
  closeOverNeeds,
  type ForkInput,
  type ForkResult,
  type ImportInput,
  type RewriteInput,
  type RollbackInput,
  type RollbackResult,
} from '@ckpt/core/adapter';
import {
  appendBytes,
  type CheckpointRow,
  checkpointFromRow,
  importedSessionRow,
  rewriteValues,
  type SqlReads,
  type SqlWrites,
} from '@ckpt/core/sql';
import type Database from 'better-sqlite3';
import { GroupCommit } from './group-commit.js';
import { prepare, rowsOf, type SqliteStatement } from './runner.js';
import type { tables } from './schema.js';
import { mutations, PLUCKED } from './statements.js';

/** A checkpoint's row, where its data and transcript items are named by the ids of their rows. */
interface CheckpointRefs {
  seq: number;
  parent: number | null;
  created_at: number;
  metadata: string;
  body: number;
  transcript: number | null;
}

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
 * The mutations on `db`, and the dropping of every table of the namespace (`t`), the KV
 * store's and the meta table included; other namespaces' tables in the file, and the file, stay.
 */
export function sqliteWrites(
  db: Database.Database,
  t: ReturnType<typeof tables>,
  reads: SqlReads<SqliteStatement>,
  groupCommit: boolean,
): { writes: SqlWrites; dropTables(): Promise<void> } {
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
    const body = sql.insertBody.run(input.data).lastInsertRowid;
    const transcript =
      input.transcript === '[]' ? null : sql.insertTranscript.run(input.transcript).lastInsertRowid;
    sql.insertCheckpoint.run(id, seq, head, input.now, input.metadata, body, transcript);
    const now = input.now;
    sql.upsertSession.run(id, seq, seq, head, now, body, input.metadata, now, now);
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

  const prune = db.transaction((sessionId: string, keepLast: number): number => {
    const session = sql.headOf.get(sessionId) as { head: number } | undefined;
    if (!session) return 0;
    // The keepLast-th highest seq: everything below it goes, except the head.
    const lowestKept = sql.pruneThreshold.get(sessionId, keepLast - 1) as
      | { seq: number }
      | undefined;
    if (!lowestKept) return 0;
    const below = lowestKept.seq;
    let needed: number[] = [];
    const withNeeds = sql.hasNeeds.get(sessionId) !== undefined;
    if (withNeeds) {
      // Kept for their own sake: the newest and the head; kept besides: what those need.
      const roots = [...(sql.newestFrom.all(sessionId, below) as number[]), session.head];
      const needsOf = (seq: number) => sql.needsOf.all(sessionId, seq) as number[];
      needed = [...closeOverNeeds(roots, needsOf)].filter((seq) => seq < below);
    }
    const range = { id: sessionId, below, head: session.head, needed: JSON.stringify(needed) };
    sql.pruneBodies.run(range);
    sql.pruneTranscripts.run(range);
    const removed = sql.pruneCheckpoints.run(range).changes;
    if (withNeeds && removed > 0) sql.pruneNeeds.run(range);
    if (removed > 0) sql.countDown.run(removed, sessionId);
    return removed;
  });

  const remove = db.transaction((sessionId: string): boolean => {
    sql.deleteBodies.run(sessionId);
    sql.deleteTranscripts.run(sessionId);
    sql.deleteCheckpoints.run(sessionId);
    sql.deleteIdempotency.run(sessionId);
    sql.deleteNeeds.run(sessionId);
    return sql.deleteSession.run(sessionId).changes > 0;
  });

  const importSession = db.transaction((input: ImportInput): 'imported' | 'exists' => {
    const id = input.sessionId;
    if (sql.headOf.get(id)) {
      if (!input.replace) return 'exists';
      remove(id);
    }
    let headBody = 0;
    for (const cp of input.checkpoints) {
      const body = sql.insertBody.run(cp.data).lastInsertRowid;
      const transcript =
        cp.transcript === '[]' ? null : sql.insertTranscript.run(cp.transcript).lastInsertRowid;
      sql.insertCheckpoint.run(id, cp.seq, cp.parent, cp.createdAt, cp.metadata, body, transcript);
      for (const needed of cp.needs) sql.insertNeed.run(id, cp.seq, needed);
      if (cp.seq === input.head) headBody = Number(body);
    }
    sql.insertImported.run({ ...importedSessionRow(input), head_body: headBody });
    return 'imported';
  });
  const rewrite = db.transaction((input: RewriteInput): boolean => {
    const values = rewriteValues(input);
    if (sql.rewriteBody.run(values).changes === 0) return false;
    sql.rewriteTranscript.run(values);
    return true;
  });
  const dropTables = db.transaction(() => {
    for (const table of Object.values(t)) db.exec(`DROP TABLE IF EXISTS ${table}`);
  });
  /** Where mutations wait for the next group; null when each commits alone. */
  const group = groupCommit ? new GroupCommit(db) : null;
  /** Run a write transaction: with the next group, or alone when group commit is off. */
  const write = <A extends unknown[], T>(
    transaction: Database.Transaction<(...args: A) => T>,
    args: A,
    bytes = 0,
  ): Promise<T> => {
    if (group === null) return Promise.resolve(transaction.immediate(...args));
    return group.run(transaction, args, bytes);
  };
  return {
    writes: {
      append: async (input) => write(append, [input], appendBytes(input)),
      rollback: async (input) => write(rollback, [input]),
      fork: async (input) => write(fork, [input]),
      prune: async (sessionId, keepLast) => write(prune, [sessionId, keepLast]),
      delete: async (sessionId) => write(remove, [sessionId]),
      importSession: async (input) => {
        let bytes = 0;
        for (const cp of input.checkpoints) bytes += appendBytes(cp);
        return write(importSession, [input], bytes);
      },
      rewriteCheckpoint: async (input) =>
        write(rewrite, [input], appendBytes({ ...input.to, metadata: '' })),
    },
    dropTables: () => write(dropTables, []),
  };
}
