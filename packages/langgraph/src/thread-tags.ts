/**
 * The tags a thread's sessions get from the metadata keys the saver's `tagKeys` name, so that
 * `list` with a filter on them and no thread finds the threads through the store's tag index.
 * Each key's tag is the latest string value a checkpoint of the session gave it; a checkpoint
 * without the key, or with a value that is no string, leaves it as it was. A session where a
 * key's value changed is marked RETAGGED, and `list` reads such sessions whole, since the tag
 * then no longer names every value its checkpoints hold.
 */
import {
  type CheckpointStore,
  CkptError,
  MAX_TAG_KEY_LENGTH,
  MAX_TAG_VALUE_BYTES,
  MAX_TAGS,
} from '@ckpt/core';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { CheckpointMetadata } from '@langchain/langgraph-checkpoint';

/** A session's tags, as the store takes and gives them. */
export type Tags = Record<string, string>;

/** The tag of a session where a tagged key's value changed: `list` reads its checkpoints whole. */
export const RETAGGED: Readonly<Tags> = { 'langgraph.retagged': '1' };
const [RETAGGED_KEY] = Object.keys(RETAGGED) as [string];

/** The characters of a tag key, as the store takes them. */
const TAG_KEY = /^[A-Za-z0-9_.:-]+$/;

/** How many sessions' tags a saver remembers, so that a `put` there reads none. */
const KNOWN_SESSIONS = 1024;

function invalidTagKeys(message: string): CkptError {
  return new CkptError('INVALID_ARGUMENT', message, { details: { argument: 'options.tagKeys' } });
}

/** `options.tagKeys` as given: distinct tag keys, leaving room for RETAGGED; [] when omitted. */
export function checkTagKeys(value: unknown): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw invalidTagKeys(
      `options.tagKeys must be an array of metadata keys, such as ['user_id'], got ${JSON.stringify(value)}.`,
    );
  }
  if (value.length > MAX_TAGS - 1) {
    throw invalidTagKeys(
      `options.tagKeys names ${value.length} keys; at most ${MAX_TAGS - 1} (a session has at most ${MAX_TAGS} tags, one of them the saver's ${RETAGGED_KEY}).`,
    );
  }
  for (const key of value) {
    if (typeof key !== 'string' || key.length > MAX_TAG_KEY_LENGTH || !TAG_KEY.test(key)) {
      throw invalidTagKeys(
        `options.tagKeys has ${JSON.stringify(key)}; a tag key is 1 to ${MAX_TAG_KEY_LENGTH} of the characters A-Z a-z 0-9 _ . : -.`,
      );
    }
    if (key === RETAGGED_KEY) {
      throw invalidTagKeys(`options.tagKeys cannot name ${RETAGGED_KEY}: the saver sets it.`);
    }
  }
  if (new Set(value).size !== value.length) {
    throw invalidTagKeys(`options.tagKeys names a key twice: ${JSON.stringify(value)}.`);
  }
  return [...value];
}

/**
 * Whether a metadata value can be a tag: a string the store takes as one. A value that cannot
 * is not tagged, and a filter on it is not answered from the index.
 */
export function taggable(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    Buffer.byteLength(value, 'utf8') <= MAX_TAG_VALUE_BYTES &&
    !value.includes('\0') &&
    value.isWellFormed()
  );
}

/** A value LangGraph Python's savers copy from a config into a checkpoint's metadata. */
function copied(value: unknown): boolean {
  return (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

/** The tag keys of a saver, and the tags it knows each recent session has. */
export class ThreadTags {
  readonly keys: readonly string[];
  readonly #known = new Map<string, Tags>();

  constructor(keys: readonly string[]) {
    this.keys = keys;
  }

  /**
   * The metadata a checkpoint is stored with: with each named key it lacks taken from the
   * config's `metadata`, else from its `configurable` (a string, number or boolean), as
   * LangGraph Python's savers and the LangGraph API server do for every key. LangGraph JS
   * passes the metadata given to `invoke` in the config, not in the checkpoint's metadata.
   */
  metadataOf(metadata: CheckpointMetadata, config: RunnableConfig): CheckpointMetadata {
    let out: Record<string, unknown> | undefined;
    for (const key of this.keys) {
      if (metadata !== undefined && key in metadata) continue;
      for (const source of [config.metadata, config.configurable]) {
        const value = source?.[key];
        if (!copied(value)) continue;
        out ??= { ...metadata };
        out[key] = value;
        break;
      }
    }
    return (out ?? metadata) as CheckpointMetadata;
  }

  /**
   * The tags a `put` of a checkpoint with `metadata` gives the session (undefined: it names no
   * tagged key, and the put leaves the session's tags as they are): the named keys' values over
   * the other tags the saver knows the session has, read when it knows none. Each such put
   * writes them, so tags changed from outside (`store.setTags`, `ckpt tag --clear`) or a session
   * made anew (another process deleted the thread) get them back with the next checkpoint.
   */
  async plan(
    store: CheckpointStore,
    sessionId: string,
    metadata: CheckpointMetadata,
  ): Promise<Tags | undefined> {
    const named: Tags = {};
    for (const key of this.keys) {
      const value = (metadata as Record<string, unknown> | undefined)?.[key];
      if (taggable(value)) named[key] = value;
    }
    if (Object.keys(named).length === 0) return undefined;
    const current = this.#known.get(sessionId) ?? (await store.info(sessionId))?.tags ?? {};
    const changed = Object.entries(named).some(
      ([key, value]) => current[key] !== undefined && current[key] !== value,
    );
    return { ...current, ...named, ...(changed ? RETAGGED : {}) };
  }

  /** After the `put` that wrote `tags` (from `plan`): remember them as the session's. */
  written(sessionId: string, tags: Tags | undefined): void {
    if (tags === undefined) return;
    this.#known.delete(sessionId);
    this.#known.set(sessionId, tags);
    if (this.#known.size > KNOWN_SESSIONS) this.#known.delete(this.#known.keys().next().value!);
  }

  /** Forget the session's tags (it was deleted). */
  forget(sessionId: string): void {
    this.#known.delete(sessionId);
  }

  /**
   * The tags that find every thread with a checkpoint matching `filter`: its pairs on tagged
   * keys whose values can be tags; undefined when it has none, and the index cannot answer it.
   */
  where(filter: Record<string, unknown> | undefined): Tags | undefined {
    const where: Tags = {};
    for (const key of this.keys) {
      const value = filter?.[key];
      if (taggable(value)) where[key] = value;
    }
    return Object.keys(where).length > 0 ? where : undefined;
  }
}
