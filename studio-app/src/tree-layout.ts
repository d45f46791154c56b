/**
 * A session's checkpoints laid out for drawing: one row per checkpoint shown, in lanes. A
 * chain (a checkpoint, its first child, that one's, …) runs down one lane; the active
 * timeline is the root's chain, in the first lane. Each other child starts a branch of its
 * own, drawn after the chain it leaves, in a lane free from the row it leaves at to its last
 * row. A long run of plain checkpoints in a chain (none the head, a branch point, a fork's
 * source, pinned or picked) shows its first and last few and one gap row for the rest, which
 * can be opened a step at a time, so that a session of ten thousand checkpoints draws a
 * handful of rows. A line of plain checkpoints may come as one node standing for all of them
 * (`count`), so that the work is linear in the number of nodes given and rows drawn, not in
 * the number of checkpoints; there is no recursion.
 */

/** What the layout needs of a checkpoint. */
export interface LayoutNode {
  seq: number;
  parent: number | null;
  active: boolean;
  head: boolean;
  forks: string[];
  parentMissing: boolean;
  pinned?: boolean;
  /**
   * How many checkpoints this node stands for (default 1): `seq` … `seq + count - 1`, each
   * after the first the child of the one before, none of them anything but plain.
   */
  count?: number;
}

/** The seq of the last checkpoint `n` stands for. */
const lastSeq = (n: LayoutNode) => n.seq + (n.count ?? 1) - 1;

/** The checkpoints at `from` … `to - 1` in a line of plain nodes, each standing for one or more. */
function* checkpointsOf<N extends LayoutNode>(line: readonly N[], from: number, to: number) {
  let start = 0;
  for (const n of line) {
    const { count = 1, ...one } = n;
    for (let k = Math.max(from - start, 0); k < count && start + k < to; k++) {
      yield count === 1
        ? n
        : ({ ...one, seq: n.seq + k, parent: k === 0 ? n.parent : n.seq + k - 1 } as N);
    }
    start += count;
    if (start >= to) return;
  }
}

/** A checkpoint's row. */
export interface NodeRow<N extends LayoutNode> {
  kind: 'node';
  node: N;
  row: number;
  lane: number;
}

/** A row standing for checkpoints left out of a chain. */
export interface GapRow {
  kind: 'gap';
  row: number;
  lane: number;
  /** The run the gap belongs to (its first checkpoint's seq), to open it by. */
  run: number;
  /** How many checkpoints it stands for, and the first and last of them. */
  hidden: number;
  first: number;
  last: number;
  active: boolean;
}

/** A line between two rows: down a lane, or from a branch point across to its branch. */
export interface Edge {
  fromRow: number;
  fromLane: number;
  toRow: number;
  toLane: number;
  /** Both ends on the active timeline. */
  active: boolean;
}

/** The drawing's rows, lines and width in lanes. */
export interface Layout<N extends LayoutNode> {
  rows: (NodeRow<N> | GapRow)[];
  edges: Edge[];
  lanes: number;
}

/** How many plain checkpoints a run may have before its middle is folded into a gap. */
export const FOLD_OVER = 8;
/** How many checkpoints of a folded run stay in view at each end. */
export const FOLD_KEEP = 2;
/** How many more checkpoints opening a gap shows each time. */
export const OPEN_STEP = 200;

/**
 * Lay out `nodes`. `opened` says, per run (its first seq), how many more of its checkpoints
 * to show; `keep` names checkpoints that must stay in view (the one picked, the one compared).
 */
export function layoutTree<N extends LayoutNode>(
  nodes: readonly N[],
  opened: ReadonlyMap<number, number> = new Map(),
  keep: ReadonlySet<number> = new Set(),
): Layout<N> {
  // Each node by its last checkpoint, the one a child names as its parent.
  const bySeq = new Map<number, N>();
  for (const n of nodes) bySeq.set(lastSeq(n), n);
  const children = new Map<number, N[]>();
  const roots: N[] = [];
  for (const n of [...nodes].sort((a, b) => a.seq - b.seq)) {
    if (n.parent === null || !bySeq.has(n.parent)) roots.push(n);
    else {
      const kids = children.get(n.parent);
      if (kids) kids.push(n);
      else children.set(n.parent, [n]);
    }
  }
  // The chain goes on through the child on the active timeline, else the oldest.
  const next = (n: N): N | undefined => {
    const kids = children.get(lastSeq(n));
    if (kids === undefined) return undefined;
    return kids.find((k) => k.active) ?? kids[0];
  };
  const plain = (n: N, chainStart: boolean, chainEnd: boolean) =>
    !chainStart &&
    !chainEnd &&
    !n.head &&
    n.forks.length === 0 &&
    n.pinned !== true &&
    !keep.has(n.seq) &&
    (children.get(lastSeq(n))?.length ?? 0) <= 1;

  const rows: (NodeRow<N> | GapRow)[] = [];
  const edges: Edge[] = [];
  /** Each chain: its rows, where it leaves from, for the lanes. */
  const chains: { first: number; last: number; fromRow: number | null }[] = [];
  /** Where each shown checkpoint is, for the branches that leave it. */
  const rowOf = new Map<number, number>();
  const chainOfRow: number[] = [];

  // Chains to draw, newest pushed last: a root, or a branch with the checkpoint it leaves.
  const pending: { start: N; from: N | null }[] = roots
    .slice()
    .reverse()
    .map((start) => ({ start, from: null }));
  while (pending.length > 0) {
    const { start, from } = pending.pop()!;
    const chain: N[] = [];
    for (let n: N | undefined = start; n !== undefined; n = next(n)) chain.push(n);
    const index = chains.length;
    const firstRow = rows.length;
    const emit = (n: N) => {
      rowOf.set(n.seq, rows.length);
      chainOfRow.push(index);
      rows.push({ kind: 'node', node: n, row: rows.length, lane: 0 });
    };
    for (let i = 0; i < chain.length; ) {
      const n = chain[i]!;
      if (!plain(n, i === 0, i === chain.length - 1)) {
        emit(n);
        i++;
        continue;
      }
      let end = i;
      while (end + 1 < chain.length && plain(chain[end + 1]!, false, end + 1 === chain.length - 1))
        end++;
      const run = chain.slice(i, end + 1);
      const length = run.reduce((sum, r) => sum + (r.count ?? 1), 0);
      const shownTop = FOLD_KEEP + (opened.get(run[0]!.seq) ?? 0);
      const folded = length > FOLD_OVER && shownTop + FOLD_KEEP < length;
      const hideFrom = folded ? shownTop : length;
      const hideTo = folded ? length - FOLD_KEEP : length;
      for (const r of checkpointsOf(run, 0, hideFrom)) emit(r);
      if (folded) {
        const [first] = checkpointsOf(run, hideFrom, hideFrom + 1);
        const [last] = checkpointsOf(run, hideTo - 1, hideTo);
        chainOfRow.push(index);
        rows.push({
          kind: 'gap',
          row: rows.length,
          lane: 0,
          run: run[0]!.seq,
          hidden: hideTo - hideFrom,
          first: first!.seq,
          last: last!.seq,
          active: first!.active && last!.active,
        });
      }
      for (const r of checkpointsOf(run, hideTo, length)) emit(r);
      i = end + 1;
    }
    chains.push({
      first: firstRow,
      last: rows.length - 1,
      fromRow: from === null ? null : rowOf.get(from.seq)!,
    });
    // Branches leave their chain top down: push the lowest last, so that it is drawn first.
    const branches: { start: N; from: N }[] = [];
    for (const n of chain) {
      const main = next(n);
      for (const kid of children.get(lastSeq(n)) ?? [])
        if (kid !== main) branches.push({ start: kid, from: n });
    }
    for (const b of branches.reverse()) pending.push(b);
  }

  // Lanes: each chain takes the lowest lane free over its rows (from the row it leaves at),
  // chains taken in the order of their top rows.
  const laneOf: number[] = new Array(chains.length);
  const busyUntil: number[] = [];
  const order = chains
    .map((c, i) => ({ top: c.fromRow ?? c.first, i }))
    .sort((a, b) => a.top - b.top || a.i - b.i);
  for (const { top, i } of order) {
    let lane = busyUntil.findIndex((until) => until < top);
    if (lane === -1) lane = busyUntil.length;
    busyUntil[lane] = chains[i]!.last;
    laneOf[i] = lane;
  }
  for (const r of rows) r.lane = laneOf[chainOfRow[r.row]!]!;

  const activeRow = (r: NodeRow<N> | GapRow) => (r.kind === 'node' ? r.node.active : r.active);
  chains.forEach((c, i) => {
    for (let row = c.first; row < c.last; row++) {
      edges.push({
        fromRow: row,
        fromLane: laneOf[i]!,
        toRow: row + 1,
        toLane: laneOf[i]!,
        active: activeRow(rows[row]!) && activeRow(rows[row + 1]!),
      });
    }
    if (c.fromRow !== null) {
      edges.push({
        fromRow: c.fromRow,
        fromLane: rows[c.fromRow]!.lane,
        toRow: c.first,
        toLane: laneOf[i]!,
        active: activeRow(rows[c.fromRow]!) && activeRow(rows[c.first]!),
      });
    }
  });
  return { rows, edges, lanes: busyUntil.length };
}
