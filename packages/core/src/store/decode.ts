/** A stored checkpoint as the store returns it: its values decoded, its time a Date. */
import type { StoredCheckpoint } from '../adapter/backend.js';
import { decodeJson, decodeMetadata } from '../values/encode.js';
import type { SessionValues } from './session-values.js';

export async function decodeCheckpoint(values: SessionValues, stored: StoredCheckpoint) {
  return {
    seq: stored.seq,
    parent: stored.parent,
    data: decodeJson(await values.open(stored.data, 'data')),
    metadata: decodeMetadata(stored.metadata),
    createdAt: new Date(stored.createdAt),
  };
}
