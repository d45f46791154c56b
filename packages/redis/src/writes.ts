/**
 * The Redis backend's mutations. Each is one Lua script (statements.ts) on the slot of its
 * session. Fork is the exception on a cluster, where source and copy may live on different
 * nodes: it reads the source in one script, then publishes the whole copy in one script on the
 * new id's slot (see the README).
 */
import {
  type AppendInput,
  type AppendResult,
  type DeleteIdleResult,
  type ForkInput,
  type ForkResult,
  type ImportInput,
  type PinResult,
  type PruneRule,
  type RewriteInput,
  type RollbackInput,
  type RollbackResult,
  storedBytesOrText,
  type Tags,
} from '@ckpt/core/adapter';
import type { RedisNamespace } from './runner.js';
import { logKeys, type SessionKeys, sessionKeys, wholeSession } from './schema.js';
import {
  type BytesReply,
  checkpoint,
  padTime,
  pinArg,
  type Reply,
  seqArg,
  textOf,
} from './script-values.js';
import * as lua from './statements.js';
import { tagsText } from './tags.js';

const numberOrNull = (value: string | null | undefined) =>
  value === null || value === undefined ? null : Number(value);

/** A script's reply for a session or seq it did not find: `no_session` or `no_seq`. */
function notFound(status: string | null | undefined) {
  return { status: 'not_found', missing: status === 'no_session' ? 'session' : 'seq' } as const;
}

/**
 * The append script's arguments for `input` on the session of keys `k`, its data and
 * transcript items as `stored` hands them to ioredis.
 */
export function appendArgs(
  k: SessionKeys,
  input: AppendInput,
  stored: (value: string) => Buffer | string = storedBytesOrText,
): (Buffer | string)[] {
  return [
    stored(input.data),
    input.metadata,
    stored(input.transcript),
    input.expectedHead === undefined ? '0' : '1',
    seqArg(input.expectedHead),
    input.idempotencyKey === undefined ? '0' : '1',
    input.idempotencyKey ?? '',
    padTime(input.now),
    k.hexId,
    input.needs.join(','),
    // '' leaves the session's tags as they are.
    input.tags === undefined ? '' : tagsText(input.tags),
  ];
}

export async function append(on: RedisNamespace, input: AppendInput): Promise<AppendResult> {
  const k = sessionKeys(on.namespace, input.sessionId);
  const reply = await lua.append.runForBytes<BytesReply>(
    on.client,
    wholeSession(k),
    appendArgs(k, input),
  );
  const [status, seq, third] = reply.slice(0, 3).map(textOf);
  switch (status) {
    case 'written':
      return { status, seq: Number(seq), parent: numberOrNull(third) };
    case 'replayed':
      return {
        status,
        seq: Number(seq),
        // seq, info, data and pin, each as the bytes it is held as
        checkpoint: third
          ? checkpoint(...(reply.slice(1, 5) as [Buffer, Buffer, Buffer, Buffer]))
          : null,
      };
    default:
      // conflict: the head in the second place
      return { status: 'conflict', head: numberOrNull(seq) };
  }
}

export async function rollback(on: RedisNamespace, input: RollbackInput): Promise<RollbackResult> {
  const k = sessionKeys(on.namespace, input.sessionId);
  const [status, head] = await lua.rollback.run<Reply>(
    on.client,
    [k.session, k.info, k.data, k.catalog, k.pins, ...logKeys(k.changes), k.tags],
    [
      String(input.seq),
      input.expectedHead === undefined ? '0' : '1',
      seqArg(input.expectedHead),
      padTime(input.now),
      k.hexId,
    ],
  );
  switch (status) {
    case 'done':
      return { status };
    case 'conflict':
      return { status, head: numberOrNull(head) };
    default:
      return notFound(status);
  }
}

export async function fork(on: RedisNamespace, input: ForkInput): Promise<ForkResult> {
  const from = sessionKeys(on.namespace, input.sessionId);
  // Read for bytes: the checkpoints' data and transcript items reach the copy as they are stored.
  const [status, at, tags, ...chain] = await lua.forkRead.runForBytes<BytesReply>(
    on.client,
    [from.session, from.info, from.data, from.transcript, from.needs],
    [seqArg(input.atSeq)],
  );
  if (textOf(status) !== 'found') return notFound(textOf(status));
  const to = sessionKeys(on.namespace, input.newId);
  const published = await lua.forkWrite.run<string>(
    on.client,
    [
      to.session,
      to.info,
      to.data,
      to.transcript,
      to.seqs,
      to.catalog,
      to.needs,
      to.ids,
      to.pins,
      ...logKeys(to.changes),
      to.tags,
    ],
    [padTime(input.now), to.hexId, input.sessionId, at!, tags!, ...chain.map((v) => v ?? '')],
  );
  return published === 'done' ? { status: 'done', seq: Number(textOf(at)) } : { status: 'exists' };
}

export async function prune(
  on: RedisNamespace,
  sessionId: string,
  rule: PruneRule,
  dryRun = false,
): Promise<number> {
  const k = sessionKeys(on.namespace, sessionId);
  return lua.prune.count(
    on.client,
    [k.session, k.info, k.data, k.transcript, k.seqs, k.needs, k.pins, ...logKeys(k.changes)],
    // Times as plain numbers, not padded: a cutoff before 1970 (a huge olderThan) is negative.
    [
      rule.keepLast === null ? '' : String(rule.keepLast),
      rule.createdBefore === null ? '' : String(rule.createdBefore),
      dryRun ? '1' : '0',
      k.hexId,
    ],
  );
}

export async function deleteSession(on: RedisNamespace, sessionId: string): Promise<boolean> {
  const k = sessionKeys(on.namespace, sessionId);
  return (await lua.deleteSession.count(on.client, wholeSession(k), [k.hexId])) === 1;
}

export async function pin(
  on: RedisNamespace,
  input: { sessionId: string; seq: number; note: string | null },
): Promise<PinResult> {
  const k = sessionKeys(on.namespace, input.sessionId);
  const status = await lua.pin.run<string>(
    on.client,
    [k.session, k.info, k.pins],
    [String(input.seq), pinArg(input.note)],
  );
  return status === 'done' ? { status } : notFound(status);
}

export async function unpin(on: RedisNamespace, sessionId: string, seq: number): Promise<boolean> {
  const k = sessionKeys(on.namespace, sessionId);
  return (await lua.unpin.count(on.client, [k.session, k.pins], [String(seq)])) === 1;
}

export async function deleteIdle(
  on: RedisNamespace,
  sessionId: string,
  idleBefore: number,
  dryRun: boolean,
): Promise<DeleteIdleResult> {
  const k = sessionKeys(on.namespace, sessionId);
  const checkpoints = await lua.deleteIdle.count(on.client, wholeSession(k), [
    k.hexId,
    idleBefore,
    dryRun ? '1' : '0',
  ]);
  return checkpoints < 0 ? { status: 'kept' } : { status: 'deleted', checkpoints };
}

export async function rewriteCheckpoint(on: RedisNamespace, input: RewriteInput): Promise<boolean> {
  const k = sessionKeys(on.namespace, input.sessionId);
  const { from, to } = input;
  // What was read may be stored in either form: as bytes, or as the text of layout version 1.
  const rewritten = await lua.rewrite.count(
    on.client,
    [k.session, k.data, k.transcript],
    [
      String(input.seq),
      storedBytesOrText(from.data),
      from.data,
      storedBytesOrText(from.transcript),
      from.transcript,
      storedBytesOrText(to.data),
      storedBytesOrText(to.transcript),
    ],
  );
  return rewritten === 1;
}

export async function importSession(
  on: RedisNamespace,
  input: ImportInput,
): Promise<'imported' | 'exists'> {
  const k = sessionKeys(on.namespace, input.sessionId);
  const checkpoints = input.checkpoints.flatMap((cp) => [
    String(cp.seq),
    `${seqArg(cp.parent)} ${padTime(cp.createdAt)} ${cp.metadata}`,
    storedBytesOrText(cp.data),
    storedBytesOrText(cp.transcript),
    cp.needs.join(','),
    cp.pinned ? pinArg(cp.pinNote) : '',
  ]);
  return lua.importSession.run<'imported' | 'exists'>(on.client, wholeSession(k), [
    input.replace ? '1' : '0',
    k.hexId,
    String(input.head),
    input.forkedFrom?.sessionId ?? '',
    seqArg(input.forkedFrom?.seq),
    padTime(input.createdAt),
    padTime(input.updatedAt),
    tagsText(input.tags),
    ...checkpoints,
  ]);
}

export async function setTags(on: RedisNamespace, sessionId: string, tags: Tags): Promise<boolean> {
  const k = sessionKeys(on.namespace, sessionId);
  return (await lua.setTags.count(on.client, [k.session, k.tags], [tagsText(tags), k.hexId])) === 1;
}
