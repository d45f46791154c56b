/**
 * What a checkpoint needs: the earlier checkpoints of its session that it refers to (an
 * integration that stores each value once, in the checkpoint where it changed, points later
 * checkpoints at that one). Validating the list a caller gives, and closing a set of kept
 * checkpoints over it, so that whatever removes checkpoints never removes one a kept
 * checkpoint needs.
 */
import { invalidArgument } from '../values/errors.js';
import { describe } from '../values/validate.js';

/** The most seqs one checkpoint may name in `needs`. */
export const MAX_NEEDS = 1000;

/**
 * `needs` as a caller gave it (omitted, or an array of seqs), checked: at most MAX_NEEDS
 * positive safe integers. Returned sorted ascending, each seq once.
 */
export function checkNeeds(value: unknown, argument: string): number[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw invalidArgument(
      argument,
      `${argument} must be an array of seqs of earlier checkpoints, got ${describe(value)}.`,
    );
  }
  if (value.length > MAX_NEEDS) {
    throw invalidArgument(
      argument,
      `${argument} names ${value.length} seqs; the limit is ${MAX_NEEDS}. Name the checkpoints this one refers to directly; what those need is kept with them.`,
    );
  }
  value.forEach((seq, i) => {
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) {
      throw invalidArgument(
        `${argument}[${i}]`,
        `${argument}[${i}] must be the seq of a checkpoint: an integer from 1 to ${Number.MAX_SAFE_INTEGER}, got ${describe(seq)}.`,
      );
    }
  });
  return [...new Set(value as number[])].sort((a, b) => a - b);
}

/**
 * Walks the closure: yields each seq whose needs it has not read yet, takes those needs back,
 * and returns `roots` with every seq they need, directly or through one another.
 */
function* closure(roots: Iterable<number>): Generator<number, Set<number>, Iterable<number>> {
  const kept = new Set(roots);
  const unread = [...kept];
  for (let seq = unread.pop(); seq !== undefined; seq = unread.pop()) {
    for (const needed of yield seq) {
      if (!kept.has(needed)) {
        kept.add(needed);
        unread.push(needed);
      }
    }
  }
  return kept;
}

/**
 * The checkpoints a removal must keep: `roots` (those kept for their own sake: the newest,
 * the head) and, transitively, every checkpoint they need, as `needsOf` gives each one's.
 * Seqs that are not stored may be among them; a removal simply has nothing to keep there.
 */
export function closeOverNeeds(
  roots: Iterable<number>,
  needsOf: (seq: number) => Iterable<number>,
): Set<number> {
  const walk = closure(roots);
  let step = walk.next();
  while (!step.done) step = walk.next(needsOf(step.value));
  return step.value;
}

/** `closeOverNeeds` for needs that are read asynchronously. */
export async function closeOverNeedsAsync(
  roots: Iterable<number>,
  needsOf: (seq: number) => Promise<Iterable<number>>,
): Promise<Set<number>> {
  const walk = closure(roots);
  let step = walk.next();
  while (!step.done) step = walk.next(await needsOf(step.value));
  return step.value;
}
