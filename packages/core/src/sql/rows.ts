/**
 * The rows the SQL backends' statements return (snake_case columns), and their mapping to the
 * backend contract's types. Numbers may arrive as numbers or numeric strings, depending on the
 * driver.
 */
import type {
  AppendResult,
  DeleteIdleResult,
  ForkResult,
  ImportInput,
  PinResult,
  RollbackResult,
  StoredCheckpoint,
  StoredCheckpointInfo,
  StoredLineageEntry,
  StoredSession,
  Tags,
} from '../adapter/backend.js';
import { textFromStoredBytes } from '../adapter/stored-bytes.js';
import type { BatchOutcome } from './busy-pool-batches.js';

type Num = number | string;
const num = (value: Num): number => Number(value);
const numOrNull = (value: Num | null | undefined): number | null =>
  value === null || value === undefined ? null : Number(value);

/** A session row (snake_case columns). */
export interface SessionRow {
  id: string;
  head: Num;
  checkpoints: Num;
  forked_from_id: string | null;
  forked_from_seq: Num | null;
  metadata: string;
  created_at: Num;
  updated_at: Num;
  /** JSON text of the session's tags (keys ascending); null or absent when it has none. */
  tags?: string | null;
}

/**
 * A value column (data, transcript items, a state value): bytes where the column holds bytes,
 * text where it holds text (see stored-bytes.ts); read back with `textFromStoredBytes`.
 */
export type StoredValue = string | Uint8Array;

/** A checkpoint row, with `data` when it was read. */
export interface CheckpointRow {
  seq: Num;
  parent: Num | null;
  created_at: Num;
  metadata: string;
  data: StoredValue;
  /** A boolean on PostgreSQL, 1 or 0 elsewhere. */
  pinned: boolean | Num;
  pin_note: string | null;
}

/** A step of a lineage walk; `transcript` null or absent when not asked for. */
export interface LineageRow {
  seq: Num;
  parent: Num | null;
  created_at: Num;
  transcript?: StoredValue | null;
}

/** What an append procedure returns: a status and the columns that status needs. */
export interface AppendRow {
  status: 'written' | 'replayed' | 'conflict';
  seq: Num | null;
  parent: Num | null;
  head?: Num | null;
  data?: StoredValue | null;
  metadata?: string | null;
  created_at?: Num | null;
  pinned?: boolean | Num | null;
  pin_note?: string | null;
}

/** The session a row describes. */
export function sessionFromRow(row: SessionRow): StoredSession {
  return {
    sessionId: row.id,
    head: num(row.head),
    checkpoints: num(row.checkpoints),
    forkedFrom:
      row.forked_from_id === null
        ? null
        : { sessionId: row.forked_from_id, seq: num(row.forked_from_seq as Num) },
    metadata: row.metadata,
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
    tags: tagsFromColumn(row.tags),
  };
}

/** Tags as a statement takes them: JSON text of the object, keys ascending (null: none). */
export function tagsArg(tags: Tags | undefined): string | null {
  return tags === undefined || Object.keys(tags).length === 0 ? null : JSON.stringify(tags);
}

/** Tags from their column: JSON text of the object, or null or `{}` for none. */
export function tagsFromColumn(column: string | null | undefined): Tags {
  return column === null || column === undefined || column === '' ? {} : JSON.parse(column);
}

/** The checkpoint a row describes. */
export function checkpointFromRow(row: CheckpointRow): StoredCheckpoint {
  return { ...checkpointInfoFromRow(row), data: textFromStoredBytes(row.data) };
}

/** The checkpoint a row describes, without data. */
export function checkpointInfoFromRow(row: Omit<CheckpointRow, 'data'>): StoredCheckpointInfo {
  const pinned = Number(row.pinned) === 1;
  return {
    seq: num(row.seq),
    parent: numOrNull(row.parent),
    metadata: row.metadata,
    createdAt: num(row.created_at),
    pinned,
    pinNote: pinned ? row.pin_note : null,
  };
}

/** The lineage step a row describes. */
export function lineageFromRow(row: LineageRow): StoredLineageEntry {
  const entry: StoredLineageEntry = {
    seq: num(row.seq),
    parent: numOrNull(row.parent),
    createdAt: num(row.created_at),
  };
  if (row.transcript !== null && row.transcript !== undefined) {
    entry.transcript = textFromStoredBytes(row.transcript);
  }
  return entry;
}

/** The needs of an exported checkpoint's row: JSON text of an array of seqs, or null for none. */
export function needsFromColumn(text: string | null | undefined): number[] {
  if (text === null || text === undefined || text === '[]') return [];
  return (JSON.parse(text) as Num[]).map(num).sort((a, b) => a - b);
}

/** The outcome of an append procedure. */
export function appendResultFromRow(row: AppendRow): AppendResult {
  switch (row.status) {
    case 'written':
      return { status: 'written', seq: num(row.seq as Num), parent: numOrNull(row.parent) };
    case 'conflict':
      return { status: 'conflict', head: numOrNull(row.head) };
    case 'replayed':
      return {
        status: 'replayed',
        seq: num(row.seq as Num),
        checkpoint:
          row.data === null || row.data === undefined
            ? null
            : checkpointFromRow({
                seq: row.seq as Num,
                parent: row.parent,
                created_at: row.created_at as Num,
                metadata: row.metadata as string,
                data: row.data,
                pinned: row.pinned ?? false,
                pin_note: row.pin_note ?? null,
              }),
      };
  }
}

/**
 * The session row an import writes, named as the SQL backends' sessions columns are: the head,
 * its parent, time and metadata copied beside it (which every SQL backend keeps there), the
 * last seq and the count.
 */
export function importedSessionRow(input: ImportInput) {
  const cps = input.checkpoints;
  const head = cps.find((cp) => cp.seq === input.head)!;
  return {
    id: input.sessionId,
    head: head.seq,
    head_parent: head.parent,
    head_created_at: head.createdAt,
    last_seq: cps.at(-1)!.seq,
    checkpoints: cps.length,
    forked_from_id: input.forkedFrom?.sessionId ?? null,
    forked_from_seq: input.forkedFrom?.seq ?? null,
    metadata: head.metadata,
    created_at: input.createdAt,
    updated_at: input.updatedAt,
    pinned: importedPins(input).length,
    tags: tagsArg(input.tags),
  };
}

/** The pinned checkpoints of an import: seq and note each, seq ascending. */
export function importedPins(input: ImportInput): { seq: number; note: string | null }[] {
  return input.checkpoints
    .filter((cp) => cp.pinned)
    .map((cp) => ({ seq: cp.seq, note: cp.pinNote }));
}

/** A row of a batch of appends: an append's row, or the error that refused that call alone. */
export interface BatchAppendRow extends Omit<AppendRow, 'status'> {
  status: AppendRow['status'] | 'error';
  error_code?: string | null;
  error_message?: string | null;
}

/** The server's error for one call of a batch, with its code as the driver would give it. */
export class BatchCallError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'BatchCallError';
  }
}

/** The outcome of one call of a batch of appends. */
export function batchAppendOutcomeFromRow(row: BatchAppendRow): BatchOutcome<AppendResult> {
  if (row.status === 'error') {
    return { error: new BatchCallError(row.error_message ?? 'error', String(row.error_code)) };
  }
  return { value: appendResultFromRow(row as AppendRow) };
}

/** The outcome of a rollback procedure: `done`, `conflict`, `no_session` or `no_seq`. */
export function rollbackResultFromRow(row: { status: string; head: Num | null }): RollbackResult {
  switch (row.status) {
    case 'done':
      return { status: 'done' };
    case 'conflict':
      return { status: 'conflict', head: numOrNull(row.head) };
    case 'no_session':
      return { status: 'not_found', missing: 'session' };
    default:
      return { status: 'not_found', missing: 'seq' };
  }
}

/** The outcome of a pin procedure: `done`, `no_session` or `no_seq`. */
export function pinResultFromRow(row: { status: string }): PinResult {
  switch (row.status) {
    case 'done':
      return { status: 'done' };
    case 'no_session':
      return { status: 'not_found', missing: 'session' };
    default:
      return { status: 'not_found', missing: 'seq' };
  }
}

/** The outcome of a deleteIdle procedure: the deleted session's checkpoints, or null for kept. */
export function deleteIdleResultFromRow(row: { checkpoints: Num | null }): DeleteIdleResult {
  return row.checkpoints === null
    ? { status: 'kept' }
    : { status: 'deleted', checkpoints: num(row.checkpoints) };
}

/** The outcome of a batch of idle sessions deleted: how many sessions and checkpoints went. */
export function idleBatchFromRow(row: { sessions: Num | null; checkpoints: Num | null }): {
  sessions: number;
  checkpoints: number;
} {
  return { sessions: num(row.sessions ?? 0), checkpoints: num(row.checkpoints ?? 0) };
}

/** The outcome of a fork procedure: `done`, `exists`, `no_session` or `no_seq`. */
export function forkResultFromRow(row: { status: string; seq: Num | null }): ForkResult {
  switch (row.status) {
    case 'done':
      return { status: 'done', seq: num(row.seq as Num) };
    case 'exists':
      return { status: 'exists' };
    case 'no_session':
      return { status: 'not_found', missing: 'session' };
    default:
      return { status: 'not_found', missing: 'seq' };
  }
}
