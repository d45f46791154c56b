/**
 * A session's checkpoints as a branch tree. A chain of single children stays in one column;
 * where a checkpoint has several children, each child's branch is drawn below it with
 * `├─`/`└─`. The head is marked, the active timeline (the head and its ancestors) stands out
 * from the other branches, a checkpoint another session was forked from names it, and a pinned
 * one says so, with its note.
 */
import type { CheckpointInfo } from '@ckpt/core';
import { brief, type Colors, columns, shortTime } from './io.js';

/** One checkpoint of the tree, as `--json` gives it. */
export interface TreeNode {
  seq: number;
  parent: number | null;
  createdAt: Date;
  metadata: CheckpointInfo['metadata'];
  /** On the active timeline: the head or one of its ancestors. */
  active: boolean;
  head: boolean;
  /** Sessions forked from this checkpoint. */
  forks: string[];
  /** Whether its parent is no longer stored (pruned). */
  parentMissing: boolean;
  /** Whether it is pinned (`ckpt pin`). */
  pinned: boolean;
  /** Its pin's note; null when not pinned or pinned without one. */
  pinNote: string | null;
}

/**
 * The nodes of a session, seq ascending. The active timeline is the head and its stored
 * ancestors, found by following `parent` through `checkpoints`, as `history()` does.
 */
export function treeNodes(
  checkpoints: CheckpointInfo[],
  head: number,
  forks: Map<number, string[]>,
): TreeNode[] {
  const bySeq = new Map(checkpoints.map((cp) => [cp.seq, cp]));
  const active = new Set<number>();
  for (let seq: number | null = head; seq !== null && bySeq.has(seq); ) {
    active.add(seq);
    seq = bySeq.get(seq)!.parent;
  }
  return [...checkpoints]
    .sort((a, b) => a.seq - b.seq)
    .map((cp) => ({
      seq: cp.seq,
      parent: cp.parent,
      createdAt: cp.createdAt,
      metadata: cp.metadata,
      active: active.has(cp.seq),
      head: cp.seq === head,
      forks: forks.get(cp.seq) ?? [],
      parentMissing: cp.parent !== null && !bySeq.has(cp.parent),
      pinned: cp.pinned,
      pinNote: cp.pinNote,
    }));
}

/**
 * The tree's lines. The times stand in one column whatever the depth of a branch or the width
 * of a seq; with `width`, each line's metadata is cut so that the line fits in it.
 */
export function renderTree(nodes: TreeNode[], c: Colors, width: number | null = null): string[] {
  const bySeq = new Map(nodes.map((n) => [n.seq, n]));
  const children = new Map<number, number[]>();
  const roots: number[] = [];
  for (const n of nodes) {
    if (n.parent === null || n.parentMissing) roots.push(n.seq);
    else children.set(n.parent, [...(children.get(n.parent) ?? []), n.seq]);
  }
  // Each checkpoint with the branch lines drawn before it, in the order they are printed.
  const rows: { prefix: string; node: TreeNode }[] = [];
  // One chain: `first` before its first checkpoint, `rest` before the ones after it.
  const chain = (start: number, first: string, rest: string) => {
    let prefix = first;
    for (let seq: number | undefined = start; seq !== undefined; ) {
      rows.push({ prefix, node: bySeq.get(seq)! });
      prefix = rest;
      const kids: number[] = children.get(seq) ?? [];
      if (kids.length === 1) {
        seq = kids[0];
        continue;
      }
      kids.forEach((kid, i) => {
        const last = i === kids.length - 1;
        chain(kid, rest + (last ? '└─ ' : '├─ '), rest + (last ? '   ' : '│  '));
      });
      seq = undefined;
    }
  };
  for (const root of roots) chain(root, '', '');

  const lead = (row: (typeof rows)[number]) =>
    columns(row.prefix) + 2 + String(row.node.seq).length;
  const leadWidth = Math.max(0, ...rows.map(lead));
  return rows.map((row) => {
    const n = row.node;
    const mark = n.head ? c.green('◉') : n.active ? '●' : c.dim('○');
    const seq = n.active ? c.bold(String(n.seq)) : c.dim(String(n.seq));
    const notes = [
      n.head ? c.green('head') : '',
      pinLabel(n, c),
      n.parentMissing ? c.dim(`parent ${n.parent} pruned`) : '',
      n.forks.length > 0
        ? c.cyan(`forked to ${n.forks.map((f) => JSON.stringify(f)).join(', ')}`)
        : '',
    ]
      .filter(Boolean)
      .map((note) => `  ${note}`)
      .join('');
    const start = `${c.dim(row.prefix)}${mark} ${seq}${' '.repeat(leadWidth - lead(row))}  ${c.dim(shortTime(n.createdAt))}`;
    if (Object.keys(n.metadata).length === 0) return start + notes;
    const room = width === null ? null : Math.max(width - columns(start + notes) - 2, 10);
    return `${start}  ${brief(n.metadata, room)}${notes}`;
  });
}

/** `pinned`, or `pinned: <note>`, in yellow; '' for a checkpoint that is not pinned. */
export function pinLabel(cp: { pinned: boolean; pinNote: string | null }, c: Colors): string {
  if (!cp.pinned) return '';
  return c.yellow(cp.pinNote === null ? 'pinned' : `pinned: ${JSON.stringify(cp.pinNote)}`);
}
