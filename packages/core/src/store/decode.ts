/** A stored checkpoint as the store returns it: its values decoded, its time a Date. */
import type { StoredCheckpoint } from '../adapter/backend.js';
import { parseValue } from '../codecs/chain.js';
import { decodeMetadata } from '../values/encode.js';
import type { JsonValue, Metadata } from '../values/json.js';
import { type SessionValues, whenOpened } from './session-values.js';

/** A decoded checkpoint without its session id. */
export interface DecodedCheckpoint {
  seq: number;
  parent: number | null;
  data: JsonValue;
  metadata: Metadata;
  createdAt: Date;
}

/** At once for a plain value; a promise only where the value's session must be looked up. */
export function decodeCheckpoint(
  values: SessionValues,
  stored: StoredCheckpoint,
): DecodedCheckpoint | Promise<DecodedCheckpoint> {
  return whenOpened(values.open(stored.data, 'data', stored.seq), (text) => ({
    seq: stored.seq,
    parent: stored.parent,
    data: parseValue(text, { session: values.sessionId, part: 'data', seq: stored.seq }),
    metadata: decodeMetadata(stored.metadata),
    createdAt: new Date(stored.createdAt),
  }));
}
