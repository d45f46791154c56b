/**
 * A session's tree as the studio's page draws it, small whatever the session's length: its
 * shape alone (which checkpoint follows which, which are on the active timeline, forked from,
 * pinned), with each run of checkpoints that follow one another in a line sent as one entry.
 * A session of 10,000 checkpoints in a line is a handful of entries instead of 1.5 MB; the
 * time and metadata of the checkpoints the page shows are asked for apart (see
 * session-trees.ts).
 */
import type { JsonValue, SessionInfo } from '@ckpt/core';
import type { TopologyRun, SessionTopology as WireTopology } from '@ckpt/studio-app/wire';
import type { SessionTree } from '../reads.js';

/** `GET /api/sessions/<id>/topology`, with the summary's times as dates before they are sent. */
export type SessionTopology = Omit<WireTopology, 'info'> & { info: SessionInfo };

/** What the page shows beside a checkpoint in the tree. */
export interface CheckpointDetail {
  seq: number;
  createdAt: Date;
  metadata: { [key: string]: JsonValue };
}

/** The tree's shape, with its runs folded. */
export function topologyOf(tree: SessionTree): SessionTopology {
  const runs: TopologyRun[] = [];
  const forks: Record<string, string[]> = {};
  const pinned: number[] = [];
  let keepsPins = false;
  let last: TopologyRun | undefined;
  for (const n of tree.checkpoints) {
    if (n.forks.length > 0) forks[n.seq] = n.forks;
    if (n.pinned !== undefined) keepsPins = true;
    if (n.pinned === true) pinned.push(n.seq);
    const follows =
      last !== undefined &&
      n.seq === last.seq + last.length &&
      n.parent === n.seq - 1 &&
      n.active === last.active;
    if (follows) last!.length++;
    else {
      last = {
        seq: n.seq,
        length: 1,
        parent: n.parent,
        parentMissing: n.parentMissing,
        active: n.active,
      };
      runs.push(last);
    }
  }
  return {
    sessionId: tree.sessionId,
    info: tree.info,
    runs,
    forks,
    ...(keepsPins ? { pinned } : {}),
  };
}
