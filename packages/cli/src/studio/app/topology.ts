/** A session's shape, as the API sends it (in runs), unfolded into the checkpoints the layout takes. */
import type { LayoutNode } from './tree-layout.js';
import type { SessionTopology } from './wire.js';

/** Every checkpoint of `topology`, seq ascending. */
export function nodesOf(topology: SessionTopology): LayoutNode[] {
  const { info, runs, forks, pinned } = topology;
  const pins = pinned === undefined ? null : new Set(pinned);
  const nodes: LayoutNode[] = [];
  for (const run of runs) {
    for (let i = 0; i < run.length; i++) {
      const seq = run.seq + i;
      nodes.push({
        seq,
        parent: i === 0 ? run.parent : seq - 1,
        active: run.active,
        head: seq === info.head,
        forks: forks[seq] ?? [],
        parentMissing: i === 0 && run.parentMissing,
        ...(pins === null ? {} : { pinned: pins.has(seq) }),
      });
    }
  }
  return nodes;
}

/** Whether `topology` has checkpoint `seq`. */
export const hasCheckpoint = (topology: SessionTopology, seq: number) =>
  topology.runs.some((run) => seq >= run.seq && seq < run.seq + run.length);
