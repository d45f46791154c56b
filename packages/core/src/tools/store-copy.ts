/**
 * `copyStore`: every session and state value of one store into another, whatever the backends,
 * as `exportSession` and `importSession` move them, several sessions at a time and never more
 * than those in memory.
 */

import { checkIfExists } from '../store/session-transfer.js';
import type { CheckpointStore } from '../store/store.js';
import type { ImportOptions } from '../store/types.js';
import { checkOptions, checkPositiveInteger, checkSignal } from '../values/validate.js';
import type { TransferCounts } from './export-format.js';
import { moveStateValue } from './state-transfer.js';
import { allSessionIds, allStateEntries } from './store-walk.js';

/** Options of `copyStore`. */
export interface CopyOptions extends ImportOptions {
  /** Sessions moved at once (default 8): each is held whole in memory while it moves. */
  concurrency?: number;
  /** Copy the state scopes too (default true). */
  state?: boolean;
  /** Called after each session and state value, with the counts so far. */
  onProgress?(counts: TransferCounts): void;
  /**
   * Stops the copy once aborted: the sessions being moved finish, no other starts, and the
   * copy rejects with the signal's reason; every session is whole in the target or absent.
   */
  signal?: AbortSignal;
}

/**
 * Copy every session (then every state value) of `source` into `target`. With
 * `ifExists: 'skip'`, a session or state value the target already holds is left as it is.
 */
export async function copyStore(
  source: CheckpointStore,
  target: CheckpointStore,
  options: CopyOptions = {},
): Promise<TransferCounts> {
  const opts = checkOptions(
    options,
    'options',
    ['concurrency', 'state', 'onProgress', 'ifExists', 'signal'],
    'copyStore()',
  );
  const concurrency =
    opts.concurrency === undefined ? 8 : checkPositiveInteger(opts.concurrency, 'concurrency');
  const signal = checkSignal(opts.signal, 'options.signal');
  const ifExists = checkIfExists(opts.ifExists);
  const counts: TransferCounts = { sessions: 0, checkpoints: 0, state: 0, skipped: 0 };
  const ids = allSessionIds(source);

  const worker = async () => {
    // The workers share one iterator: each takes the next id as it is free.
    for (;;) {
      if (signal?.aborted) return;
      const next = await ids.next();
      if (next.done) return;
      const session = await source.exportSession(next.value);
      if (session === null) continue; // deleted since it was listed
      const outcome = await target.importSession(session, { ifExists });
      if (outcome === 'skipped') counts.skipped++;
      else {
        counts.sessions++;
        counts.checkpoints += session.count;
      }
      opts.onProgress?.({ ...counts });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  signal?.throwIfAborted();

  if (opts.state ?? true) {
    for await (const { scope, key, value } of allStateEntries(source)) {
      signal?.throwIfAborted();
      if (await moveStateValue(target, scope, key, value, ifExists)) counts.state++;
      opts.onProgress?.({ ...counts });
    }
  }
  return counts;
}
