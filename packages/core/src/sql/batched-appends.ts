/**
 * Checkpoints that would wait for a busy pool, sent together (group commit, see
 * busy-pool-batches.ts): an adapter's append, wrapped.
 */
import type { AppendInput, AppendResult } from '../adapter/backend.js';
import { type BatchPool, BusyPoolBatches } from './busy-pool-batches.js';

/** An append that batches, and the count of what it batched. */
export interface BatchedAppends {
  append(input: AppendInput): Promise<AppendResult>;
  /**
   * How many batches of checkpoints that waited for a connection were sent, and how many calls
   * they carried: to see whether the pool is the bottleneck.
   */
  sent(): { batches: number; calls: number };
}

/** The payload bytes of a checkpoint, as batch bounds count them. */
export function appendBytes(input: Pick<AppendInput, 'data' | 'metadata' | 'transcript'>): number {
  return input.data.length + input.metadata.length + input.transcript.length;
}

/**
 * `pool.alone` while the pool has a free connection; else the checkpoint joins the next batch,
 * sent on a connection `pool` leases.
 */
export function batchedAppends(pool: BatchPool<AppendInput, AppendResult>): BatchedAppends {
  const batches = new BusyPoolBatches(pool);
  return {
    append: (input) => batches.run(input, appendBytes(input)),
    sent: () => ({ ...batches.sent }),
  };
}
