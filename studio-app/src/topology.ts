/**
 * A session's shape, as the API sends it (in runs), as the nodes the layout takes: each
 * checkpoint that may have a row of its own (the first and last of a run, the head, a branch
 * point, a fork's source, a pinned one, one the page keeps in view) as a node, and each line
 * of plain checkpoints between them as one node standing for all of them. A session of 10,000
 * checkpoints in a line is three nodes: the first, the 9,998 between, the head.
 */
import type { LayoutNode } from './tree-layout.js';
import type { SessionTopology, TopologyRun } from './wire.js';

/** The nodes of `topology`, seq ascending; each of `keep` a node of its own. */
export function nodesOf(
  topology: SessionTopology,
  keep: ReadonlySet<number> = new Set(),
): LayoutNode[] {
  const { info, runs, forks, pinned } = topology;
  const pins = pinned === undefined ? null : new Set(pinned);
  const branchPoints = runs.flatMap((run) => (run.parent === null ? [] : [run.parent]));
  const own = [
    ...new Set([info.head, ...Object.keys(forks).map(Number), ...(pinned ?? []), ...keep]),
    ...branchPoints,
  ].sort((a, b) => a - b);
  const nodes: LayoutNode[] = [];
  const add = (run: TopologyRun, seq: number, count: number) =>
    nodes.push({
      seq,
      parent: seq === run.seq ? run.parent : seq - 1,
      active: run.active,
      head: seq === info.head,
      forks: forks[seq] ?? [],
      parentMissing: seq === run.seq && run.parentMissing,
      ...(pins === null ? {} : { pinned: pins.has(seq) }),
      ...(count > 1 ? { count } : {}),
    });
  let o = 0;
  for (const run of runs) {
    const last = run.seq + run.length - 1;
    /** The first checkpoint of the run not yet in a node. */
    let next = run.seq;
    const alone = (seq: number) => {
      if (seq > next) add(run, next, seq - next);
      add(run, seq, 1);
      next = seq + 1;
    };
    alone(run.seq);
    for (; o < own.length && own[o]! <= last; o++) if (own[o]! >= next) alone(own[o]!);
    if (last >= next) alone(last);
  }
  return nodes;
}

/** Whether `topology` has checkpoint `seq`. */
export const hasCheckpoint = (topology: SessionTopology, seq: number) =>
  topology.runs.some((run) => seq >= run.seq && seq < run.seq + run.length);
