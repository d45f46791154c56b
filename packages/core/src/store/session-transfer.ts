/**
 * A session exactly as stored, out of one store and into another: `exportSession` reads it a
 * page of checkpoints at a time, `importSession` checks a whole one and stores it in one
 * atomic backend call. Every read of the copy (each seq, history, list, transcript, info, the
 * order of sessions) answers as the original did.
 */
import type {
  CompleteBackend,
  ExportedStoredCheckpoint,
  StoredSession,
} from '../adapter/backend.js';
import { checkNeeds } from '../adapter/needs.js';
import { type CodecChain, parseValue } from '../codecs/chain.js';
import {
  checkCheckpointSize,
  encodeJson,
  encodeMetadata,
  encodeTranscript,
} from '../values/encode.js';
import { CkptError, invalidArgument, unsupported } from '../values/errors.js';
import type { JsonValue } from '../values/json.js';
import { checkTags } from '../values/tags.js';
import { checkName, checkOptions, checkPositiveInteger, describe } from '../values/validate.js';
import { decodeCheckpoint } from './decode.js';
import { type SessionValues, sealCheckpointValue } from './session-values.js';
import type { Runner } from './state.js';
import type { ExportedCheckpoint, ImportOptions, SessionExport, SessionImport } from './types.js';

/** Checkpoints read by one page of an export: at most this many whole payloads in memory. */
export const EXPORT_PAGE = 64;

/** `sessionId` exactly as stored, its checkpoints read as they are iterated; null when absent. */
export async function exportSession(
  values: SessionValues,
  run: Runner,
): Promise<SessionExport | null> {
  const { backend, sessionId } = values;
  const found = await run(() => backend.session(sessionId));
  if (found === null) return null;
  return {
    sessionId,
    head: found.head,
    forkedFrom: found.forkedFrom,
    createdAt: new Date(found.createdAt),
    updatedAt: new Date(found.updatedAt),
    tags: { ...found.tags },
    count: found.checkpoints,
    checkpoints: pages(values, run, found),
  };
}

/**
 * The session's checkpoints, a page at a time. The pages are separate reads, so once they are
 * all read the session is read again: had it changed in between (a checkpoint, a rollback, a
 * prune, a delete), the pages may not fit together, and the export fails with CONFLICT.
 */
async function* pages(
  values: SessionValues,
  run: Runner,
  found: StoredSession,
): AsyncGenerator<ExportedCheckpoint> {
  const { backend } = values;
  const { sessionId } = found;
  let afterSeq: number | null = null;
  let read = 0;
  for (;;) {
    const page = await run(() =>
      backend.exportCheckpoints(sessionId, { afterSeq, limit: EXPORT_PAGE }),
    );
    for (const stored of page) yield await decoded(values, stored);
    read += page.length;
    if (page.length < EXPORT_PAGE) break;
    afterSeq = page.at(-1)!.seq;
  }
  const after = await run(() => backend.session(sessionId));
  if (
    after === null ||
    after.head !== found.head ||
    after.updatedAt !== found.updatedAt ||
    after.checkpoints !== found.checkpoints ||
    read !== found.checkpoints
  ) {
    throw new CkptError(
      'CONFLICT',
      `session ${JSON.stringify(sessionId)} changed while it was being exported; export it again.`,
      { details: { argument: 'sessionId' } },
    );
  }
}

async function decoded(
  values: SessionValues,
  stored: ExportedStoredCheckpoint,
): Promise<ExportedCheckpoint> {
  const cp: ExportedCheckpoint = {
    ...(await decodeCheckpoint(values, stored)),
    transcript: parseValue(await values.open(stored.transcript, 'transcript', stored.seq), {
      session: values.sessionId,
      part: 'transcript',
      seq: stored.seq,
    }) as JsonValue[],
  };
  // Omitted when empty, as a checkpoint without needs was exported before needs existed (and
  // as a backend written before them may leave it out).
  if (stored.needs !== undefined && stored.needs.length > 0) cp.needs = [...stored.needs];
  // Likewise a pin: an unpinned checkpoint exports as it did before pins existed.
  if (stored.pinned) {
    cp.pinned = true;
    if (stored.pinNote !== null) cp.pinNote = stored.pinNote;
  }
  return cp;
}

/**
 * Check `session` whole (every checkpoint read into memory), then store it in one backend call.
 * Nothing is written when anything in it is refused.
 */
export async function importSession(
  backend: CompleteBackend,
  run: Runner,
  session: SessionImport,
  options: ImportOptions | undefined,
  maxPayloadBytes: number,
  codecs: CodecChain,
): Promise<'imported' | 'skipped'> {
  const ifExists = checkIfExists(
    checkOptions(options, 'options', ['ifExists'], 'importSession()').ifExists,
  );
  if (typeof session !== 'object' || session === null) {
    throw invalidArgument('session', `importSession() needs a session, got ${describe(session)}.`);
  }
  const sessionId = checkName(session.sessionId, 'session.sessionId');
  const head = checkPositiveInteger(session.head, 'session.head');
  const forkedFrom = checkForkedFrom(session.forkedFrom);
  const createdAt = checkTime(session.createdAt, 'session.createdAt');
  const updatedAt = checkTime(session.updatedAt, 'session.updatedAt');
  const tags = session.tags === undefined ? {} : checkTags(session.tags, 'session.tags');
  if (Object.keys(tags).length > 0 && !backend.capabilities.tags) {
    const refused = unsupported(backend.name, 'importSession() of a session with tags', 'tags');
    throw new CkptError('UNSUPPORTED', refused.message, {
      details: { ...refused.details, sessionId },
    });
  }
  const checkpoints = await checkCheckpoints(session.checkpoints, maxPayloadBytes);
  for (const cp of checkpoints) {
    cp.data = sealCheckpointValue(codecs, sessionId, 'data', cp.data);
    cp.transcript = sealCheckpointValue(codecs, sessionId, 'transcript', cp.transcript);
  }
  if (!checkpoints.some((cp) => cp.seq === head)) {
    throw invalidArgument(
      'session.head',
      `session.head is ${head}, but no checkpoint has that seq; the head must be one of them.`,
    );
  }
  const outcome = await run(() =>
    backend.importSession({
      sessionId,
      head,
      forkedFrom,
      createdAt,
      updatedAt,
      checkpoints,
      replace: ifExists === 'replace',
      tags,
    }),
  );
  if (outcome === 'imported') return 'imported';
  if (ifExists === 'skip') return 'skipped';
  throw new CkptError(
    'CONFLICT',
    `session ${JSON.stringify(sessionId)} already exists; nothing was imported. Pass ifExists: 'replace' to overwrite it, or 'skip' to leave it.`,
    { details: { argument: 'session.sessionId', sessionId } },
  );
}

/** `ifExists` as given ('fail' when absent); anything else is refused. */
export function checkIfExists(value: unknown): NonNullable<ImportOptions['ifExists']> {
  const ifExists = value ?? 'fail';
  if (ifExists !== 'fail' && ifExists !== 'skip' && ifExists !== 'replace') {
    throw invalidArgument(
      'ifExists',
      `ifExists must be 'fail', 'skip' or 'replace', got ${describe(ifExists)}.`,
    );
  }
  return ifExists;
}

function checkForkedFrom(value: unknown): { sessionId: string; seq: number } | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object') {
    throw invalidArgument(
      'session.forkedFrom',
      `session.forkedFrom must be null or { sessionId, seq }, got ${describe(value)}.`,
    );
  }
  const { sessionId, seq } = value as { sessionId: unknown; seq: unknown };
  return {
    sessionId: checkName(sessionId, 'session.forkedFrom.sessionId'),
    seq: checkPositiveInteger(seq, 'session.forkedFrom.seq'),
  };
}

/** A Date (or milliseconds since the epoch) as milliseconds. */
function checkTime(value: unknown, argument: string): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0) {
    throw invalidArgument(
      argument,
      `${argument} must be a valid Date (or milliseconds since 1970), got ${describe(value)}.`,
    );
  }
  return ms;
}

async function checkCheckpoints(
  given: unknown,
  maxPayloadBytes: number,
): Promise<ExportedStoredCheckpoint[]> {
  if (
    typeof given !== 'object' ||
    given === null ||
    !(Symbol.iterator in given || Symbol.asyncIterator in given)
  ) {
    throw invalidArgument(
      'session.checkpoints',
      `session.checkpoints must be an array or an (async) iterable of checkpoints, got ${describe(given)}.`,
    );
  }
  const out: ExportedStoredCheckpoint[] = [];
  let i = 0;
  for await (const cp of given as AsyncIterable<unknown>) {
    out.push(checkCheckpoint(cp, `session.checkpoints[${i++}]`, maxPayloadBytes));
  }
  if (out.length === 0) {
    throw invalidArgument(
      'session.checkpoints',
      'session.checkpoints is empty; a session has at least one.',
    );
  }
  out.sort((a, b) => a.seq - b.seq);
  for (let n = 1; n < out.length; n++) {
    if (out[n]!.seq === out[n - 1]!.seq) {
      throw invalidArgument(
        'session.checkpoints',
        `session.checkpoints holds seq ${out[n]!.seq} twice; each seq is stored once.`,
      );
    }
  }
  // As checkpoint() does: a checkpoint keeps only the needs that name an earlier checkpoint
  // of the session (here: one that is imported with it).
  const seqs = new Set(out.map((cp) => cp.seq));
  for (const cp of out) cp.needs = cp.needs.filter((seq) => seq < cp.seq && seqs.has(seq));
  return out;
}

function checkCheckpoint(
  value: unknown,
  path: string,
  maxPayloadBytes: number,
): ExportedStoredCheckpoint {
  if (typeof value !== 'object' || value === null) {
    throw invalidArgument(path, `${path} must be a checkpoint object, got ${describe(value)}.`);
  }
  const cp = value as Record<string, unknown>;
  const seq = checkPositiveInteger(cp.seq, `${path}.seq`);
  const parent = cp.parent === null ? null : checkPositiveInteger(cp.parent, `${path}.parent`);
  // A parent is the head a checkpoint was written on, which was written before it.
  if (parent !== null && parent >= seq) {
    throw invalidArgument(
      `${path}.parent`,
      `${path}.parent is ${parent}, not below its seq ${seq}; a parent is always an earlier checkpoint.`,
    );
  }
  const data = encodeJson(cp.data, `${path}.data`).text;
  const metadata = encodeMetadata(cp.metadata, `${path}.metadata`).text;
  const transcript = encodeTranscript(cp.transcript, `${path}.transcript`).text;
  checkCheckpointSize(path, data, metadata, transcript, maxPayloadBytes);
  const { pinned, pinNote } = checkPin(cp, path);
  return {
    seq,
    parent,
    data,
    metadata,
    transcript,
    createdAt: checkTime(cp.createdAt, `${path}.createdAt`),
    needs: checkNeeds(cp.needs, `${path}.needs`),
    pinned,
    pinNote,
  };
}

/** A checkpoint's `pinned` (omitted: false) and `pinNote` (only on a pinned one), checked. */
function checkPin(cp: Record<string, unknown>, path: string) {
  const pinned = cp.pinned ?? false;
  if (typeof pinned !== 'boolean') {
    throw invalidArgument(
      `${path}.pinned`,
      `${path}.pinned must be true or false (or omitted), got ${describe(pinned)}.`,
    );
  }
  if (cp.pinNote === undefined || cp.pinNote === null) return { pinned, pinNote: null };
  if (!pinned) {
    throw invalidArgument(
      `${path}.pinNote`,
      `${path}.pinNote is given, but the checkpoint is not pinned; a note belongs to a pin.`,
    );
  }
  return { pinned, pinNote: checkName(cp.pinNote, `${path}.pinNote`) };
}
