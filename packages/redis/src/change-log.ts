/**
 * Redis's change log, as watch() reads it. Every script that changes a session or a state value
 * adds an entry to its shard's stream in the same script (LOG_CHANGE in statements.ts), so each
 * change is recorded exactly when it is made, by every process, on a cluster too. The log is the
 * 16 streams merged by entry id (`<time>-<n>`, the time in microseconds), ties broken by shard:
 * a position is `<time>.<n>.<shard>`, each part 20 digits, so positions sort as strings in the log's order.
 *
 * The shards' streams fill independently, so a reader may hand out only what no later entry can
 * go under: the horizon. A read takes two rounds of one script per shard. The first finds how
 * far the shards reach (the highest of their last entry's time and their floor); the second
 * raises every shard's floor to that, the horizon, and reads its entries up to it. Each script
 * runs alone on its node, and every later entry of that shard is added above its floor, so once
 * the second round is done no entry at or below the horizon can appear anywhere: a reader going
 * page by page misses none, whatever the nodes' clocks or how long a script ran.
 */
import {
  type ChangeKind,
  type ChangesPage,
  logPosition,
  notThisLog,
  readLogPosition,
  type StoredChange,
} from '@ckpt/core/adapter';
import type { RedisNamespace } from './runner.js';
import { changesKeys, logKeys, SHARDS, unhex } from './schema.js';
import * as lua from './statements.js';

/** The largest number a part of a stream entry id can be. */
const LARGEST_ID_PART = 2n ** 64n - 1n;
/**
 * The middle part of a position between entries, at the end of the horizon's microsecond:
 * above every entry's `n`, so the position sorts after each entry of that microsecond.
 */
const HORIZON_END = 10n ** 20n - 1n;

/** An entry id of a shard's stream. */
interface EntryId {
  time: bigint;
  n: bigint;
}

/** A position: just after an entry (of `shard`), or after every entry of microsecond `time`. */
type Place = (EntryId & { shard: number }) | { time: bigint; shard: null };

function parseId(id: string): EntryId {
  const [time, n] = id.split('-');
  return { time: BigInt(time!), n: BigInt(n!) };
}

function compareIds(a: EntryId, b: EntryId): number {
  if (a.time !== b.time) return a.time < b.time ? -1 : 1;
  return a.n === b.n ? 0 : a.n < b.n ? -1 : 1;
}

/** The position at the end of the horizon `time`, after every entry at or below it. */
function horizonPosition(time: bigint): string {
  return logPosition(time, HORIZON_END, 0);
}

/** The place `position` names; one this log cannot have made is refused (INVALID_ARGUMENT). */
function readPlace(position: string): Place {
  const [time, n, shard] = readLogPosition(position, 3) as [bigint, bigint, bigint];
  if (time > LARGEST_ID_PART) throw notThisLog(position);
  if (n === HORIZON_END && shard === 0n) return { time, shard: null };
  if (n > LARGEST_ID_PART || shard >= BigInt(SHARDS)) throw notThisLog(position);
  return { time, n, shard: Number(shard) };
}

/** The first entry id of `shard` that comes after `place` in the log (XRANGE's inclusive start). */
function firstAfter(place: Place, shard: number): EntryId {
  if (place.shard === null) return { time: place.time + 1n, n: 0n };
  // An entry of a later shard with the same id comes after the place; of this one or an
  // earlier one, only a higher id does.
  if (shard > place.shard) return { time: place.time, n: place.n };
  return place.n < LARGEST_ID_PART
    ? { time: place.time, n: place.n + 1n }
    : { time: place.time + 1n, n: 0n };
}

/** One shard's answer to the second round. */
interface ShardRead {
  /** Where the stream keeps its entries from, having let go of some below (0-0: it let go of none). */
  keptFrom: EntryId;
  /** Its entries from the start asked for up to the horizon, at most the count asked for. */
  changes: StoredChange[];
}

/** The change log of the namespace `on` names. */
export function redisChangeLog(on: RedisNamespace) {
  const shards = Array.from({ length: SHARDS }, (_, shard) =>
    logKeys(changesKeys(on.namespace, shard)),
  );

  /** How far the log reaches: the highest floor or entry time of any shard (first round). */
  async function reach(): Promise<bigint> {
    const reaches = await Promise.all(
      shards.map((keys) => lua.changesReach.run<string>(on.client, keys, [])),
    );
    return reaches.reduce((highest, time) => (BigInt(time) > highest ? BigInt(time) : highest), 0n);
  }

  /** Raise `shard`'s floor to `horizon` and read up to `count` entries from `from` (second round). */
  async function readShard(
    shard: number,
    horizon: bigint,
    from: EntryId,
    count: number,
  ): Promise<ShardRead> {
    const [keptFrom, ...fields] = await lua.changesRead.run<string[]>(on.client, shards[shard]!, [
      String(horizon),
      `${from.time}-${from.n}`,
      String(count),
    ]);
    const changes: StoredChange[] = [];
    for (let i = 0; i < fields.length; i += 4) {
      const { time, n } = parseId(fields[i]!);
      const seq = fields[i + 3]!;
      changes.push({
        position: logPosition(time, n, shard),
        sessionId: unhex(fields[i + 1]!),
        kind: fields[i + 2] as ChangeKind,
        seq: seq === '' ? null : Number(seq),
      });
    }
    return { keptFrom: parseId(keptFrom!), changes };
  }

  return {
    async changes({
      after,
      limit,
    }: {
      after: string | null;
      limit: number;
    }): Promise<ChangesPage | 'expired'> {
      const place = after === null ? null : readPlace(after);
      const horizon = await reach();
      const end = horizonPosition(horizon);
      // Every position the log gave is at or below a horizon, and horizons only grow.
      if (after !== null && after > end) throw notThisLog(after);
      const count = place === null ? 0 : limit;
      const starts = shards.map((_, shard) =>
        place === null ? { time: 0n, n: 0n } : firstAfter(place, shard),
      );
      const reads = await Promise.all(
        starts.map((from, shard) => readShard(shard, horizon, from, count)),
      );
      if (after === null) return { changes: [], position: end };
      // A shard that let go of entries, and keeps none from where this reader goes on: what it
      // let go may have followed the reader's place. (Only a reader as far behind as the shard
      // keeps, whose place lies just before the first entry kept, is told so needlessly.)
      const expired = reads.some(
        ({ keptFrom }, shard) =>
          (keptFrom.time > 0n || keptFrom.n > 0n) && compareIds(starts[shard]!, keptFrom) < 0,
      );
      if (expired) return 'expired';
      if (limit === 0) return { changes: [], position: after };
      // A shard that gave as many entries as asked may hold more: the merge is complete only up
      // to its last one.
      let complete = end;
      for (const { changes } of reads) {
        const last = changes.at(-1)?.position;
        if (changes.length === limit && last! < complete) complete = last!;
      }
      const merged = reads
        .flatMap(({ changes }) => changes)
        .filter((change) => change.position <= complete)
        .sort((a, b) => (a.position < b.position ? -1 : 1))
        .slice(0, limit);
      // A page short of the limit holds everything up to the horizon.
      const position = merged.length === limit ? merged.at(-1)!.position : complete;
      return { changes: merged, position };
    },
  };
}
