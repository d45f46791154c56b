/**
 * The export format: JSON Lines, written and read as streams, so that memory holds one line
 * (and, on import, one session) at a time, whatever the size of the store.
 *
 *   {"type":"header","format":"ckpt-export","version":2,"exportedAt":"2026-12-05T10:00:00.000Z"}
 *   {"type":"session","sessionId":"chat-1","head":5,"forkedFrom":null,"createdAt":"…","updatedAt":"…","checkpoints":2,"tags":{"user":"ann"}}
 *   {"type":"checkpoint","seq":4,"parent":3,"createdAt":"…","metadata":{},"transcript":[],"data":{…}}
 *   {"type":"checkpoint","seq":5,"parent":4,"createdAt":"…","metadata":{},"transcript":["hi"],"data":{…},"needs":[4]}
 *   {"type":"state","scope":"prefs","key":"theme","value":"dark"}
 *   {"type":"end","sessions":1,"checkpoints":2,"state":1}
 *
 * A session line says how many checkpoint lines follow it, seq ascending. Times are ISO 8601
 * in UTC with milliseconds. A checkpoint line has `needs` (the seqs of the earlier checkpoints
 * it needs) only when it needs some; in version 2 a line without it needs none. In version 1
 * a line without it may come from a store that did not record needs, so what it needs is
 * unknown: it is imported as needing every checkpoint before it (see `unknownNeedsKept`).
 * Likewise `pinned` (true) and `pinNote` appear only on a pinned checkpoint, and `tags` only on
 * a session that has some: a line without them, as every line written before tags existed, is
 * a session without tags. The end line lets a reader tell a whole export from a cut one.
 */

import { MAX_NEEDS } from '../adapter/needs.js';
import { checkIfExists } from '../store/session-transfer.js';
import type { CheckpointStore } from '../store/store.js';
import type { ExportedCheckpoint, ImportOptions } from '../store/types.js';
import { CkptError, isCkptError } from '../values/errors.js';
import type { JsonValue } from '../values/json.js';
import { checkSignal } from '../values/validate.js';
import { moveStateValue } from './state-transfer.js';
import { allSessionIds, allStateEntries } from './store-walk.js';

/** The name on an export's header line. */
export const EXPORT_FORMAT = 'ckpt-export';
/** The version of the format this package writes, and the newest it reads. */
export const EXPORT_VERSION = 2;
/** The version whose checkpoint lines without `needs` need what is unknown. */
const UNKNOWN_NEEDS_VERSION = 1;

/** What an export or import went through. */
export interface TransferCounts {
  /** Sessions written (on import: imported; skipped ones are counted apart). */
  sessions: number;
  /** Checkpoints of the sessions written (a skipped session's are not counted). */
  checkpoints: number;
  /** State values written (with `ifExists: 'skip'`, a value the target already held is kept and not counted). */
  state: number;
  /** Sessions an import left as they were (`ifExists: 'skip'`). */
  skipped: number;
}

/** Options of `exportStore`. */
export interface ExportOptions {
  /** Only these sessions (default: every session, most recently updated first). */
  sessionIds?: Iterable<string> | AsyncIterable<string>;
  /** Include the state scopes (default true; false when `sessionIds` is given). */
  state?: boolean;
  /** Called after each session and each state scope, with the counts so far. */
  onProgress?(counts: TransferCounts): void;
}

const time = (date: Date) => date.toISOString();

/** The lines of an export of `store` (each ends with a newline), read from it as they are taken. */
export async function* exportStore(
  store: CheckpointStore,
  options: ExportOptions = {},
): AsyncGenerator<string> {
  const counts: TransferCounts = { sessions: 0, checkpoints: 0, state: 0, skipped: 0 };
  yield line({
    type: 'header',
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt: time(new Date()),
  });
  for await (const sessionId of options.sessionIds ?? allSessionIds(store)) {
    const session = await store.exportSession(sessionId);
    if (session === null) {
      throw new CkptError(
        'NOT_FOUND',
        `session ${JSON.stringify(sessionId)} does not exist; nothing more was exported.`,
        {
          details: { argument: 'sessionIds' },
        },
      );
    }
    yield line({
      type: 'session',
      sessionId,
      head: session.head,
      forkedFrom: session.forkedFrom,
      createdAt: time(session.createdAt),
      updatedAt: time(session.updatedAt),
      checkpoints: session.count,
      ...(Object.keys(session.tags).length > 0 ? { tags: session.tags } : {}),
    });
    for await (const cp of session.checkpoints) {
      yield line({
        type: 'checkpoint',
        seq: cp.seq,
        parent: cp.parent,
        createdAt: time(cp.createdAt),
        metadata: cp.metadata,
        transcript: cp.transcript,
        data: cp.data,
        ...(cp.needs !== undefined && cp.needs.length > 0 ? { needs: cp.needs } : {}),
        ...(cp.pinned ? { pinned: true } : {}),
        ...(cp.pinned && typeof cp.pinNote === 'string' ? { pinNote: cp.pinNote } : {}),
      });
      counts.checkpoints++;
    }
    counts.sessions++;
    options.onProgress?.({ ...counts });
  }
  if (options.state ?? options.sessionIds === undefined) {
    for await (const { scope, key, value } of allStateEntries(store)) {
      yield line({ type: 'state', scope, key, value });
      counts.state++;
      options.onProgress?.({ ...counts });
    }
  }
  yield line({
    type: 'end',
    sessions: counts.sessions,
    checkpoints: counts.checkpoints,
    state: counts.state,
  });
}

function line(value: Record<string, unknown>): string {
  return `${JSON.stringify(value)}\n`;
}

/** Options of `importStore`. */
export interface ImportStoreOptions extends ImportOptions {
  /** Called after each session and each state key, with the counts so far. */
  onProgress?(counts: TransferCounts): void;
  /**
   * Stops the import before the next line once aborted: the sessions imported so far stay,
   * whole, and the import rejects with the signal's reason.
   */
  signal?: AbortSignal;
}

/**
 * Read an export (its lines, as `readline` gives them) into `store`. Each session is imported
 * whole once its last checkpoint line is read, all or nothing; state keys as they come (with
 * `ifExists: 'skip'`, only those the store does not hold yet). A malformed line (or an export
 * cut short) is refused with INVALID_ARGUMENT naming its line, and nothing of the session it
 * belongs to is written (an error of a session, such as its tags on a store without the
 * `tags` capability, has the line in `details.line` and the session in `details.sessionId`);
 * sessions before it stay imported, so running the import again with `ifExists: 'skip'` takes
 * up where it stopped.
 *
 * `into` may be a function that opens the store instead: it is called once the header has
 * been read and checked, so that an input that is no export (empty, or another file) opens,
 * and so creates, nothing.
 */
export async function importStore(
  into: CheckpointStore | (() => Promise<CheckpointStore>),
  lines: AsyncIterable<string> | Iterable<string>,
  options: ImportStoreOptions = {},
): Promise<TransferCounts> {
  const counts: TransferCounts = { sessions: 0, checkpoints: 0, state: 0, skipped: 0 };
  const { onProgress, signal: given, ...importOptions } = options;
  const signal = checkSignal(given, 'options.signal');
  const ifExists = checkIfExists(importOptions.ifExists);
  let n = 0;
  let version: number | null = null;
  let ended = false;
  /** The session being read: its line, what that line said, its checkpoints so far. */
  let open: OpenSession | null = null;
  // Set once the header is checked.
  let store = undefined as unknown as CheckpointStore;

  const importOpen = async (session: OpenSession) => {
    const { value } = session;
    const checkpoints =
      version === UNKNOWN_NEEDS_VERSION
        ? unknownNeedsKept(session.checkpoints)
        : session.checkpoints;
    let outcome: 'imported' | 'skipped';
    try {
      outcome = await store.importSession({ ...value, checkpoints }, importOptions);
    } catch (err) {
      throw atLine(err, session);
    }
    if (outcome === 'skipped') counts.skipped++;
    else {
      counts.sessions++;
      counts.checkpoints += checkpoints.length;
    }
    onProgress?.({ ...counts });
  };

  for await (const text of lines) {
    signal?.throwIfAborted();
    n++;
    if (ended) {
      if (text.trim() === '') continue;
      throw malformed(n, 'comes after the end line; an export ends there.');
    }
    const value = parse(text, n);
    if (version === null) {
      version = checkHeader(value, n);
      store = typeof into === 'function' ? await into() : into;
      continue;
    }
    if (open !== null && value.type !== 'checkpoint') {
      throw malformed(
        n,
        `is a ${describeType(value.type)} line, but session ${JSON.stringify(open.value.sessionId)} (line ${open.line}) announced ${open.value.checkpoints} checkpoints and ${open.checkpoints.length} came.`,
      );
    }
    switch (value.type) {
      case 'session':
        open = { line: n, value: sessionLine(value, n), checkpoints: [] };
        break;
      case 'checkpoint':
        if (open === null) throw malformed(n, 'is a checkpoint line outside any session.');
        open.checkpoints.push(checkpointLine(value, n));
        if (open.checkpoints.length === open.value.checkpoints) {
          await importOpen(open);
          open = null;
        }
        break;
      case 'state':
        if (await importState(store, value, n, ifExists)) counts.state++;
        onProgress?.({ ...counts });
        break;
      case 'end':
        ended = true;
        break;
      default:
        throw malformed(n, `has an unknown type ${JSON.stringify(value.type)}.`);
    }
  }
  if (version === null) throw malformed(1, 'is missing: the export is empty.');
  if (open !== null) {
    throw malformed(
      n + 1,
      `is missing: the export ends inside session ${JSON.stringify(open.value.sessionId)} (line ${open.line}); it was cut short, and that session was not imported.`,
    );
  }
  if (!ended) {
    throw malformed(
      n + 1,
      'is missing: the export has no end line, so it was cut short; what came before it was imported.',
    );
  }
  return counts;
}

interface OpenSession {
  line: number;
  value: SessionLine;
  checkpoints: ExportedCheckpoint[];
}

interface SessionLine {
  sessionId: string;
  head: number;
  forkedFrom: { sessionId: string; seq: number } | null;
  createdAt: Date;
  updatedAt: Date;
  /** How many checkpoint lines follow. */
  checkpoints: number;
  /** Its tags, as the line gives them (checked by importSession); absent: none. */
  tags?: Record<string, string>;
}

type Line = Record<string, unknown> & { type?: unknown };

function malformed(line: number, what: string): CkptError {
  return new CkptError('INVALID_ARGUMENT', `export line ${line} ${what}`, {
    details: { argument: 'export', line },
  });
}

/**
 * An error of `session`, with the line it is about (the checkpoint's it names, else the
 * session's) and the session's id, so that a caller can say which session was not written.
 */
function atLine(err: unknown, session: OpenSession): unknown {
  if (!isCkptError(err) || err.code === 'BACKEND' || err.code === 'CLOSED') return err;
  const { line } = session;
  const argument = String(err.details?.argument ?? '');
  const index = /^session\.checkpoints\[(\d+)\]/.exec(argument);
  const at = index ? line + 1 + Number(index[1]) : line;
  return new CkptError(err.code, `export line ${at}: ${err.message}`, {
    details: { sessionId: session.value.sessionId, ...err.details, line: at },
  });
}

function parse(text: string, n: number): Line {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw malformed(n, `is not JSON (${(err as Error).message}).`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw malformed(n, 'is not a JSON object.');
  }
  return value as Line;
}

/** The header's format version, checked. */
function checkHeader(value: Line, n: number): number {
  if (value.type !== 'header' || value.format !== EXPORT_FORMAT) {
    throw malformed(
      n,
      `is not a ckpt export header; an export starts with {"type":"header","format":"${EXPORT_FORMAT}",…}.`,
    );
  }
  const version = value.version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw malformed(n, `has no usable format version (${JSON.stringify(version)}).`);
  }
  if (version > EXPORT_VERSION) {
    throw malformed(
      n,
      `is format version ${version}, newer than the ${EXPORT_VERSION} this @ckpt/core reads; upgrade @ckpt/core (or the ckpt CLI) to import it.`,
    );
  }
  return version;
}

/**
 * A version 1 session's checkpoints, each whose needs its line does not name made to keep
 * every checkpoint before it: it needs the last such checkpoint before it (which keeps those
 * before it in turn) and every one since, so that no prune removes what it may refer to.
 * Seqs ascend, as the lines do.
 */
function unknownNeedsKept(checkpoints: ExportedCheckpoint[]): ExportedCheckpoint[] {
  const before: number[] = [];
  return checkpoints.map((cp) => {
    const needs =
      cp.needs !== undefined
        ? cp.needs
        : before.length <= MAX_NEEDS
          ? [...before]
          : [before[0]!, ...before.slice(1 - MAX_NEEDS)];
    if (cp.needs === undefined) before.length = 0;
    before.push(cp.seq);
    return needs.length === 0 ? cp : { ...cp, needs };
  });
}

function describeType(type: unknown): string {
  return typeof type === 'string' ? type : 'untyped';
}

/** An ISO time as a Date; anything else is refused. */
function date(value: unknown, field: string, n: number): Date {
  const parsed = typeof value === 'string' ? new Date(value) : null;
  if (parsed === null || Number.isNaN(parsed.getTime())) {
    throw malformed(n, `has no valid ${field} (an ISO 8601 time, got ${JSON.stringify(value)}).`);
  }
  return parsed;
}

function sessionLine(value: Line, n: number): SessionLine {
  const count = value.checkpoints;
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1) {
    throw malformed(n, `has no usable checkpoint count (${JSON.stringify(count)}).`);
  }
  if (typeof value.sessionId !== 'string') throw malformed(n, 'has no sessionId.');
  return {
    sessionId: value.sessionId,
    head: value.head as number,
    forkedFrom: (value.forkedFrom ?? null) as SessionLine['forkedFrom'],
    createdAt: date(value.createdAt, 'createdAt', n),
    updatedAt: date(value.updatedAt, 'updatedAt', n),
    checkpoints: count,
    ...(value.tags === undefined ? {} : { tags: value.tags as Record<string, string> }),
  };
}

function checkpointLine(value: Line, n: number): ExportedCheckpoint {
  // The values themselves are checked by importSession, which names the line of the one it refuses.
  return {
    seq: value.seq as number,
    parent: (value.parent ?? null) as number | null,
    createdAt: date(value.createdAt, 'createdAt', n),
    metadata: value.metadata as ExportedCheckpoint['metadata'],
    transcript: value.transcript as JsonValue[],
    data: value.data as JsonValue,
    ...(value.needs === undefined ? {} : { needs: value.needs as number[] }),
    ...(value.pinned === undefined ? {} : { pinned: value.pinned as boolean }),
    ...(value.pinNote === undefined ? {} : { pinNote: value.pinNote as string | null }),
  };
}

/** Write the value of a state line; true when it was written (false: kept, as `ifExists` says). */
async function importState(
  store: CheckpointStore,
  value: Line,
  n: number,
  ifExists: ImportOptions['ifExists'],
): Promise<boolean> {
  if (!('value' in value)) throw malformed(n, 'is a state line without a value.');
  try {
    return await moveStateValue(
      store,
      value.scope as string,
      value.key as string,
      value.value as JsonValue,
      ifExists,
    );
  } catch (err) {
    if (isCkptError(err, 'INVALID_ARGUMENT') || isCkptError(err, 'PAYLOAD_TOO_LARGE')) {
      throw new CkptError(err.code, `export line ${n}: ${err.message}`, {
        details: { ...err.details, line: n },
      });
    }
    throw err;
  }
}
