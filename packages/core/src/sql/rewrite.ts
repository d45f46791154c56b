/**
 * `rewriteCheckpoint` of a SQL backend whose rewrite is one statement (PostgreSQL, MySQL): it
 * changes a checkpoint's data and transcript rows only while both still hold the texts compared.
 */
import type { RewriteInput } from '../adapter/backend.js';
import type { RunStatement } from './run.js';
import type { SqlStatement } from './statement.js';

/** A rewrite as the statement takes it: the checkpoint, the texts it must hold, the new ones. */
export interface RewriteValues {
  sessionId: string;
  seq: number;
  fromData: string;
  fromTranscript: string;
  toData: string;
  toTranscript: string;
}

/** The values of a rewrite (see RewriteValues). */
export function rewriteValues(input: RewriteInput): RewriteValues {
  return {
    sessionId: input.sessionId,
    seq: input.seq,
    fromData: input.from.data,
    fromTranscript: input.from.transcript,
    toData: input.to.data,
    toTranscript: input.to.transcript,
  };
}

/**
 * `rewriteCheckpoint` as one run of `statement`, which changes (or, for a query, returns) a row
 * only when it rewrote the checkpoint.
 */
export function statementRewrite<S>(
  run: RunStatement<S>,
  statement: SqlStatement<S, RewriteValues>,
): (input: RewriteInput) => Promise<boolean> {
  return async (input) => {
    const { rows, changed } = await run(statement.sql, statement.args(rewriteValues(input)));
    return rows.length > 0 || changed > 0;
  };
}
