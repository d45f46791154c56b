/**
 * `rewriteCheckpoint` of a SQL backend whose rewrite is one statement (PostgreSQL, MySQL): it
 * changes a checkpoint's data and transcript rows only while both still hold the texts compared.
 */
import type { RewriteInput } from '../adapter/backend.js';
import { storedBytesOf } from '../adapter/stored-bytes.js';
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
 * A rewrite's values where the value columns hold bytes: each text as the bytes a write stores
 * now (storedBytesOf), and the texts compared as they are besides (`…Text`), which is how a
 * process of a version from before the columns held bytes writes them: one may still be
 * writing beside this one after the upgrade, so a rewrite matches a value held in either form.
 */
export interface RewriteBytes {
  sessionId: string;
  seq: number;
  fromData: Buffer;
  fromDataText: string;
  fromTranscript: Buffer;
  fromTranscriptText: string;
  toData: Buffer;
  toTranscript: Buffer;
}

/** `values` as a value column of bytes compares and holds them (see RewriteBytes). */
export function rewriteBytes(values: RewriteValues): RewriteBytes {
  return {
    sessionId: values.sessionId,
    seq: values.seq,
    fromData: storedBytesOf(values.fromData),
    fromDataText: values.fromData,
    fromTranscript: storedBytesOf(values.fromTranscript),
    fromTranscriptText: values.fromTranscript,
    toData: storedBytesOf(values.toData),
    toTranscript: storedBytesOf(values.toTranscript),
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
