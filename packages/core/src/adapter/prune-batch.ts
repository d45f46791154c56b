/**
 * `pruneBatch` for a backend whose prunes cost a round trip each rather than a commit each:
 * every prune of the batch sent at once, so that they share the round trips a connection
 * pipelines and the commits a server groups.
 */
import type { PruneRule } from './backend.js';

/** The prunes of `sessionIds`, all sent at once; how many checkpoints they removed in all. */
export async function pruneSideBySide(
  prune: (sessionId: string, rule: PruneRule, dryRun: boolean) => Promise<number>,
  sessionIds: readonly string[],
  rule: PruneRule,
  dryRun: boolean,
): Promise<number> {
  const removed = await Promise.all(sessionIds.map((id) => prune(id, rule, dryRun)));
  return removed.reduce((sum, n) => sum + n, 0);
}
