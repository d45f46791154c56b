/** How the studio lays a session's tree out: chains in lanes, branches beside, long runs folded. */
import { describe, expect, it } from 'vitest';
import { nodesOf } from '../src/topology.js';
import { FOLD_KEEP, type LayoutNode, layoutTree, OPEN_STEP } from '../src/tree-layout.js';
import type { SessionTopology } from '../src/wire.js';

/** Checkpoints 1..n in a line, the last the head, all on the active timeline. */
function line(n: number, from = 1): LayoutNode[] {
  return Array.from({ length: n }, (_, i) => ({
    seq: from + i,
    parent: i === 0 ? (from === 1 ? null : from - 1) : from + i - 1,
    active: true,
    head: i === n - 1,
    forks: [],
    parentMissing: false,
  }));
}

/** What each row shows: a seq, or `…n` for a gap of n. */
const shown = (nodes: LayoutNode[], opened?: Map<number, number>, keep?: Set<number>) =>
  layoutTree(nodes, opened, keep).rows.map((r) =>
    r.kind === 'node' ? r.node.seq : `…${r.hidden}`,
  );

describe('the studio tree layout', () => {
  it('keeps a short line whole, in one lane', () => {
    const layout = layoutTree(line(5));
    expect(layout.rows.map((r) => (r.kind === 'node' ? [r.node.seq, r.lane] : null))).toEqual([
      [1, 0],
      [2, 0],
      [3, 0],
      [4, 0],
      [5, 0],
    ]);
    expect(layout.lanes).toBe(1);
    expect(layout.edges).toHaveLength(4);
  });

  it('folds a long run of plain checkpoints into one gap, keeping a few at each end', () => {
    expect(shown(line(10_000))).toEqual([1, 2, 3, '…9994', 9998, 9999, 10_000]);
  });

  it('opens a gap a step at a time', () => {
    // The run is 2..9,999 (the first and the last checkpoint of the chain are never folded).
    const rows = shown(line(10_000), new Map([[2, OPEN_STEP]]));
    const before = 1 + FOLD_KEEP + OPEN_STEP;
    expect(rows.slice(0, before)).toEqual(Array.from({ length: before }, (_, i) => i + 1));
    expect(rows[before]).toBe(`…${9998 - FOLD_KEEP - OPEN_STEP - FOLD_KEEP}`);
    expect(rows.slice(before + 1)).toEqual([9998, 9999, 10_000]);
  });

  it('keeps a picked checkpoint, a branch point, a fork source and a pinned one in view', () => {
    const nodes = line(100);
    nodes[49] = { ...nodes[49]!, forks: ['other'] };
    nodes[69] = { ...nodes[69]!, pinned: true };
    const rows = shown(nodes, new Map(), new Set([30]));
    for (const seq of [30, 50, 70]) expect(rows).toContain(seq);
    expect(rows.filter((r) => typeof r === 'string')).toHaveLength(4);
  });

  it('puts the active timeline in the first lane and an abandoned branch beside it, after it', () => {
    // 1-2-3-4 then a rollback to 2 and 5-6 on the timeline: 3-4 is the abandoned branch.
    const nodes: LayoutNode[] = [
      { seq: 1, parent: null, active: true, head: false, forks: [], parentMissing: false },
      { seq: 2, parent: 1, active: true, head: false, forks: [], parentMissing: false },
      { seq: 3, parent: 2, active: false, head: false, forks: [], parentMissing: false },
      { seq: 4, parent: 3, active: false, head: false, forks: [], parentMissing: false },
      { seq: 5, parent: 2, active: true, head: false, forks: [], parentMissing: false },
      { seq: 6, parent: 5, active: true, head: true, forks: [], parentMissing: false },
    ];
    const layout = layoutTree(nodes);
    const where = Object.fromEntries(
      layout.rows.map((r) => (r.kind === 'node' ? [r.node.seq, [r.row, r.lane]] : [0, 0])),
    );
    expect(where).toEqual({ 1: [0, 0], 2: [1, 0], 5: [2, 0], 6: [3, 0], 3: [4, 1], 4: [5, 1] });
    expect(layout.lanes).toBe(2);
    expect(layout.edges).toContainEqual({
      fromRow: 1,
      fromLane: 0,
      toRow: 4,
      toLane: 1,
      active: false,
    });
  });

  it('gives branches that overlap lanes of their own, and reuses a lane once it is free', () => {
    // Two branches off 1 (2 and 4), and one off 5 below both: 1-5-6 is the timeline.
    const n = (seq: number, parent: number | null, active = false): LayoutNode => ({
      seq,
      parent,
      active,
      head: seq === 6,
      forks: [],
      parentMissing: false,
    });
    const nodes = [
      n(1, null, true),
      n(2, 1),
      n(3, 2),
      n(4, 1),
      n(5, 1, true),
      n(6, 5, true),
      n(7, 5),
    ];
    const lanes = Object.fromEntries(
      layoutTree(nodes).rows.map((r) => (r.kind === 'node' ? [r.node.seq, r.lane] : [0, 0])),
    );
    expect(lanes[1]).toBe(0);
    expect(lanes[6]).toBe(0);
    expect(new Set([lanes[2], lanes[4], lanes[7]]).size).toBe(3);
  });

  it('draws each part of a pruned session, whose oldest parents are gone, from its own root', () => {
    const nodes = line(20, 11).map((node, i) =>
      i === 0 ? { ...node, parentMissing: true } : node,
    );
    const rows = layoutTree(nodes).rows;
    expect(rows[0]).toMatchObject({ kind: 'node', node: { seq: 11 } });
    expect(rows.at(-1)).toMatchObject({ kind: 'node', node: { seq: 30 } });
  });

  it('lays out ten thousand checkpoints with branches without running out of stack', () => {
    const nodes = line(10_000);
    // A branch of two every hundred checkpoints.
    let seq = 10_001;
    for (let at = 100; at < 10_000; at += 100) {
      nodes.push({ seq, parent: at, active: false, head: false, forks: [], parentMissing: false });
      nodes.push({
        seq: seq + 1,
        parent: seq,
        active: false,
        head: false,
        forks: [],
        parentMissing: false,
      });
      seq += 2;
    }
    const layout = layoutTree(nodes);
    const seqs = layout.rows.flatMap((r) => (r.kind === 'node' ? [r.node.seq] : []));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs).toContain(10_000);
    expect(seqs).toContain(seq - 1);
  });

  it('lays a shape out from the few nodes that stand for its lines as from every checkpoint', () => {
    // 1..3,000 with 1,001..3,000 abandoned by a rollback to 1,000 and 3,001..6,000 on the
    // timeline; 4,001..4,500 off 4,000 (abandoned); a fork from 2,500; 5,000 pinned.
    const topology: SessionTopology = {
      sessionId: 's',
      info: {
        sessionId: 's',
        head: 6000,
        checkpoints: 6500,
        forkedFrom: null,
        metadata: {},
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-01T00:00:00.000Z',
        tags: {},
      },
      runs: [
        { seq: 1, length: 1000, parent: null, parentMissing: false, active: true },
        { seq: 1001, length: 2000, parent: 1000, parentMissing: false, active: false },
        { seq: 3001, length: 3000, parent: 1000, parentMissing: false, active: true },
        { seq: 6001, length: 500, parent: 4000, parentMissing: false, active: false },
      ],
      forks: { 2500: ['other'] },
      pinned: [5000],
    };
    const every: LayoutNode[] = topology.runs.flatMap((run) =>
      Array.from({ length: run.length }, (_, i) => ({
        seq: run.seq + i,
        parent: i === 0 ? run.parent : run.seq + i - 1,
        active: run.active,
        head: run.seq + i === 6000,
        forks: run.seq + i === 2500 ? ['other'] : [],
        parentMissing: false,
        pinned: run.seq + i === 5000,
      })),
    );
    const cases: [Map<number, number>, Set<number>][] = [
      [new Map(), new Set()],
      [new Map(), new Set([1500, 4000, 4001, 6200])],
      [new Map([[2, OPEN_STEP]]), new Set([2])],
      [new Map([[3002, OPEN_STEP * 20]]), new Set([1001])],
    ];
    for (const [opened, keep] of cases) {
      const few = nodesOf(topology, keep);
      expect(few.length).toBeLessThan(40);
      expect(layoutTree(few, opened, keep)).toEqual(layoutTree(every, opened, keep));
    }
  });
});
