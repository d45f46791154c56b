/**
 * The pending writes of one checkpoint, kept as one state value: a list keyed by (task, idx).
 * A write with idx >= 0 is kept as first written (a retried task writes the same again); a
 * special write (an error, an interrupt: a negative idx from WRITES_IDX_MAP) is replaced.
 */
import type { JsonValue, StateScope } from '@ckpt/core';
import {
  type CheckpointPendingWrite,
  compareWritesSortKeys,
  type SerializerProtocol,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';
import { stateKeys } from './names.js';
import { decodeValue, type Encoded } from './stored.js';

/** One stored write. */
export interface StoredWrite {
  task: string;
  idx: number;
  channel: string;
  /** The task path given to putWrites ('' when none). */
  path: string;
  value: Encoded;
}

function isWriteList(value: JsonValue | undefined): value is JsonValue[] {
  return Array.isArray(value);
}

/** `current` (a stored list, or undefined) with `incoming` merged in by (task, idx). */
export function mergeWrites(current: JsonValue | undefined, incoming: StoredWrite[]): JsonValue {
  const merged = (isWriteList(current) ? current : []) as unknown as StoredWrite[];
  const out = merged.slice();
  for (const write of incoming) {
    const at = out.findIndex((w) => w.task === write.task && w.idx === write.idx);
    if (at === -1) out.push(write);
    else if (write.idx < 0) out[at] = write;
  }
  return out as unknown as JsonValue;
}

/** The stored writes in LangGraph's order (task path, task id, idx), as pending writes. */
export async function pendingWritesOf(
  serde: SerializerProtocol,
  stored: JsonValue | undefined,
): Promise<CheckpointPendingWrite[]> {
  if (!isWriteList(stored)) return [];
  const writes = (stored as unknown as StoredWrite[]).slice();
  writes.sort((a, b) =>
    compareWritesSortKeys(
      writesSortKey(a.path, a.task, a.idx),
      writesSortKey(b.path, b.task, b.idx),
    ),
  );
  return Promise.all(
    writes.map(
      async (w): Promise<CheckpointPendingWrite> => [
        w.task,
        w.channel,
        await decodeValue(serde, w.value),
      ],
    ),
  );
}

/** The pending writes of the checkpoint `checkpointId` of `sessionId`, as LangGraph reads them. */
export async function readPendingWrites(
  state: StateScope,
  serde: SerializerProtocol,
  sessionId: string,
  checkpointId: string,
): Promise<CheckpointPendingWrite[]> {
  return pendingWritesOf(serde, await state.get(stateKeys.writes(sessionId, checkpointId)));
}
