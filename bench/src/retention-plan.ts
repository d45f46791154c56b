/** What the retention table runs, shared by the bench and the process that runs each contender. */

/** The contenders: ckpt's sweeps and prune, and the raw floor of each on the same tables. */
export type RetentionContender =
  | 'sweep native'
  | 'sweep portable'
  | 'sweep raw'
  | 'prune'
  | 'prune raw';

/** Sessions a batch of the raw floor: a sweep's page (SWEEP_PAGE in core). */
export const RAW_BATCH = 100;

/** Checkpoints in each session of the filled store. */
export const CHECKPOINTS = 10;
