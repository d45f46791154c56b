/** A stored checkpoint as the store returns it: its values decoded, its time a Date. */
import type { StoredCheckpoint } from '../adapter/backend.js';
import { decodeJson, decodeMetadata } from '../values/encode.js';

export function decodeCheckpoint(stored: StoredCheckpoint) {
  return {
    seq: stored.seq,
    parent: stored.parent,
    data: decodeJson(stored.data),
    metadata: decodeMetadata(stored.metadata),
    createdAt: new Date(stored.createdAt),
  };
}
