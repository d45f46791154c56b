/**
 * Writing as layout version 1 did, frozen here so that the upgrade tests can make a namespace
 * of that version: checkpoint data, transcript items and state values passed to the scripts as
 * text, which Redis held as its UTF-8. The scripts these call are the package's own: version 2
 * changed what the calls pass, not what the scripts do with it.
 */
import type { AppendInput, AppendResult } from '@ckpt/core/adapter';
import type { RedisBackend } from '@ckpt/redis';
import { logKeys, markerKey, sessionKeys, stateKeys, wholeSession } from '../src/schema.js';
import type { Reply } from '../src/script-values.js';
import { append, indexedSet } from '../src/statements.js';
import { appendArgs } from '../src/writes.js';

/**
 * `backend`, with its appends and state writes as version 1 made them; its other calls are its
 * own. Used only to write, before the namespace is marked back as of version 1 (markLayoutOne).
 */
export function writingLayoutOne(backend: RedisBackend): RedisBackend {
  const asText: Partial<RedisBackend> = {
    append: (input) => appendAsText(backend, input),
    stateSet: async (scope, key, value) => {
      const k = stateKeys(backend.namespace, scope);
      await indexedSet.run(
        backend.client,
        [k.values, k.index, k.catalog.key, ...logKeys(k.changes)],
        [key, value, k.catalog.member],
      );
    },
  };
  return new Proxy(backend, {
    get(target, key) {
      const own = asText[key as keyof RedisBackend];
      if (own !== undefined) return own;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function appendAsText(backend: RedisBackend, input: AppendInput): Promise<AppendResult> {
  const k = sessionKeys(backend.namespace, input.sessionId);
  // The values as they are: ioredis sends text as its UTF-8.
  const [status, seq, parent] = await append.run<Reply>(
    backend.client,
    wholeSession(k),
    appendArgs(k, input, (text) => text),
  );
  if (status !== 'written') throw new Error(`a layout 1 append was not written: ${status}`);
  return { status, seq: Number(seq), parent: parent == null ? null : Number(parent) };
}

/** Mark `backend`'s namespace as version 1 marked it. */
export async function markLayoutOne(backend: RedisBackend): Promise<void> {
  await backend.client.set(markerKey(backend.namespace), '1');
}
