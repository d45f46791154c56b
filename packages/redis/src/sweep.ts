/**
 * Native help for sweeps (`deleteIdleBatch`). The idle sessions are the oldest members of the
 * session catalog: a page of them is read across the shards as a listing reads one, oldest
 * first and only below the cutoff; then one script per shard among them decides about each
 * and deletes it, as deleteIdle does, so that a session written or pinned since it was read
 * stays. A shard's sessions and its catalog share one slot: on a cluster each script runs on
 * the node that holds them, with every key it touches named.
 */
import { catalogPage, oldestFirst } from './catalog.js';
import { explained, type RedisNamespace } from './runner.js';
import {
  catalogKey,
  logKeys,
  ownKeys,
  type SessionKeys,
  SHARDS,
  sessionKeys,
  unhex,
} from './schema.js';
import { padTime } from './script-values.js';
import * as lua from './statements.js';

/**
 * Delete up to `limit` sessions last written before `idleBefore` that hold no pin; how many
 * sessions and checkpoints went (0 sessions: none is left). Pinned idle sessions are read
 * past, once per call.
 */
export async function deleteIdleBatch(
  on: RedisNamespace,
  query: { idleBefore: number; limit: number },
): Promise<{ sessions: number; checkpoints: number }> {
  // Catalog members are `<updatedAt, 15 digits>:<hex id>`: those below this bound are idle
  // (none is, for a cutoff at or before 1970).
  const idleBound = `(${padTime(Math.max(0, query.idleBefore))}`;
  const gone = { sessions: 0, checkpoints: 0 };
  let from = '-';
  while (gone.sessions < query.limit) {
    const wanted = query.limit - gone.sessions;
    const page = await catalogPage(
      SHARDS,
      from,
      wanted,
      (shard, after, count) =>
        explained(
          on.client,
          on.client.zrangebylex(
            catalogKey(on.namespace, shard),
            after,
            idleBound,
            'LIMIT',
            0,
            count,
          ),
        ),
      oldestFirst,
    );
    const byShard = new Map<string, SessionKeys[]>();
    for (const member of page) {
      const keys = sessionKeys(on.namespace, unhex(member.slice(member.indexOf(':') + 1)));
      byShard.set(keys.catalog, [...(byShard.get(keys.catalog) ?? []), keys]);
    }
    const decided = await Promise.all(
      [...byShard.values()].map((shard) => deleteIn(on, shard, query.idleBefore)),
    );
    for (const [sessions, checkpoints] of decided) {
      gone.sessions += sessions;
      gone.checkpoints += checkpoints;
    }
    if (page.length < wanted) break;
    // What stayed (pinned, or written since) lies at or before the page's last member.
    from = `(${page.at(-1)}`;
  }
  return gone;
}

/** One script on a shard: decide about each of `sessions` (all of that shard) and delete the idle ones. */
async function deleteIn(
  on: RedisNamespace,
  sessions: SessionKeys[],
  idleBefore: number,
): Promise<[number, number]> {
  const [first] = sessions;
  const keys = sessions.flatMap(ownKeys);
  const [deleted, checkpoints] = await lua.deleteIdleBatch.run<(number | string)[]>(
    on.client,
    [first!.catalog, first!.ids, ...logKeys(first!.changes), first!.tags, ...keys],
    [idleBefore, ...sessions.map((k) => k.hexId)],
  );
  return [Number(deleted), Number(checkpoints)];
}
