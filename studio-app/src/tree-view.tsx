/**
 * A session's tree as an SVG picture: the active timeline in the first lane, the branches
 * that left it beside, the head ringed, pinned checkpoints marked, forks to other sessions
 * as links, long plain runs folded into a gap that opens on a click. Only the rows in view
 * (and a margin) are drawn, so that a tree of thousands of rows scrolls as fast as a short one,
 * and only their checkpoints' times and metadata are read, as they come into view.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { brief } from './json-tree.js';
import { navigate, sessionPath } from './router.js';
import { shortTime } from './time.js';
import { nodesOf } from './topology.js';
import {
  type Edge,
  type GapRow,
  type LayoutNode,
  layoutTree,
  type NodeRow,
  OPEN_STEP,
} from './tree-layout.js';
import type { CheckpointDetail, SessionTopology } from './wire.js';

const ROW = 26;
const LANE = 16;
const PAD = 14;
/** Rows drawn beyond each edge of the view. */
const MARGIN_ROWS = 30;

const laneX = (lane: number) => PAD + lane * LANE;
const rowY = (row: number) => PAD + row * ROW + ROW / 2;

function edgePath(e: Edge): string {
  const x1 = laneX(e.fromLane);
  const y1 = rowY(e.fromRow);
  const x2 = laneX(e.toLane);
  const y2 = rowY(e.toRow);
  if (x1 === x2) return `M${x1},${y1}L${x2},${y2}`;
  // From the branch point across to the branch's lane, then down to its first checkpoint.
  const turn = Math.min(y1 + ROW * 0.75, y2);
  return `M${x1},${y1}Q${x2},${y1} ${x2},${turn}L${x2},${y2}`;
}

/** The picture's props: the session's shape, which checkpoint is picked and which compared. */
export interface TreeViewProps {
  topology: SessionTopology;
  selected: number | null;
  compare: number | null;
  /** The session and checkpoint this session was forked from, marked on that checkpoint. */
  origin: { sessionId: string; seq: number } | null;
  /** A checkpoint was clicked. */
  onSelect(seq: number): void;
}

/** A link to another session, inside the picture. */
function SessionLink({ id, seq = null }: { id: string; seq?: number | null }) {
  return (
    <a
      href={sessionPath(id, seq)}
      class="fork-link"
      onClick={(event) => {
        event.preventDefault();
        event.stopPropagation();
        navigate(sessionPath(id, seq));
      }}
    >
      <tspan dx={6}>{id}</tspan>
    </a>
  );
}

function NodeLabel({
  r,
  detail,
  labelX,
  origin,
}: {
  r: NodeRow<LayoutNode>;
  /** Its time and metadata, once read. */
  detail: CheckpointDetail | undefined;
  labelX: number;
  origin: TreeViewProps['origin'];
}) {
  const n = r.node;
  const meta =
    detail !== undefined && Object.keys(detail.metadata).length > 0
      ? brief(detail.metadata, 60)
      : '';
  return (
    <text x={labelX} y={4} class="label">
      <tspan class="seq">{n.seq}</tspan>
      {detail !== undefined && (
        <tspan class="time" dx={8}>
          {shortTime(detail.createdAt)}
        </tspan>
      )}
      {meta !== '' && (
        <tspan class="meta" dx={8}>
          {meta}
        </tspan>
      )}
      {n.head && (
        <tspan class="tag tag-head" dx={8}>
          head
        </tspan>
      )}
      {n.pinned === true && (
        <tspan class="tag tag-pin" dx={8}>
          pinned
        </tspan>
      )}
      {n.parentMissing && (
        <tspan class="tag" dx={8}>
          parent {n.parent} pruned
        </tspan>
      )}
      {n.forks.length > 0 && (
        <tspan class="tag" dx={8}>
          forked to
        </tspan>
      )}
      {n.forks.map((fork) => (
        <SessionLink key={fork} id={fork} />
      ))}
      {origin !== null && origin.seq === n.seq && (
        <>
          <tspan class="tag" dx={8}>
            forked from
          </tspan>
          <SessionLink id={origin.sessionId} seq={origin.seq} />
        </>
      )}
    </text>
  );
}

/**
 * The times and metadata of `seqs`' checkpoints: read (once each) when they are asked for,
 * undefined until then.
 */
function useDetails(sessionId: string, seqs: number[]): Map<number, CheckpointDetail> {
  const [details, setDetails] = useState<Map<number, CheckpointDetail>>(new Map());
  const asked = useRef(new Set<number>());
  const missing = seqs.filter((seq) => !details.has(seq) && !asked.current.has(seq));
  useEffect(() => {
    if (missing.length === 0) return;
    for (const seq of missing) asked.current.add(seq);
    api.details(sessionId, missing).then(
      (read) =>
        setDetails((known) => {
          const next = new Map(known);
          for (const d of read) next.set(d.seq, d);
          return next;
        }),
      // Left unread: asked again when they next come into view.
      () => {
        for (const seq of missing) asked.current.delete(seq);
      },
    );
  }, [sessionId, missing.join(',')]);
  return details;
}

/** The tree of `topology`. */
export function TreeView({ topology, selected, compare, origin, onSelect }: TreeViewProps) {
  const [opened, setOpened] = useState<Map<number, number>>(new Map());
  const scroller = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: 800 });
  const originSeq = origin?.seq ?? null;
  const keep = useMemo(
    () => new Set([selected, compare, originSeq].filter((s): s is number => s !== null)),
    [selected, compare, originSeq],
  );
  const nodes = useMemo(() => nodesOf(topology, keep), [topology, keep]);
  const layout = useMemo(() => layoutTree(nodes, opened, keep), [nodes, opened, keep]);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (el) setView({ top: el.scrollTop, height: el.clientHeight || 800 });
  }, []);

  const first = Math.max(0, Math.floor((view.top - PAD) / ROW) - MARGIN_ROWS);
  const last = Math.ceil((view.top + view.height) / ROW) + MARGIN_ROWS;
  const rows = layout.rows.filter((r) => r.row >= first && r.row <= last);
  const shownSeqs = rows.flatMap((r) => (r.kind === 'node' ? [r.node.seq] : []));
  const details = useDetails(topology.sessionId, shownSeqs);
  const complete = shownSeqs.every((seq) => details.has(seq));
  const marked = useRef<SessionTopology | null>(null);
  useEffect(() => {
    // A mark the browser tests read: when the tree of this shape was first drawn whole.
    if (!complete || marked.current === topology) return;
    marked.current = topology;
    requestAnimationFrame(() => performance.mark('ckpt:tree-drawn'));
  }, [topology, complete]);
  const edges = layout.edges.filter(
    (e) => Math.max(e.fromRow, e.toRow) >= first && Math.min(e.fromRow, e.toRow) <= last,
  );
  const labelX = laneX(layout.lanes) + 4;
  const height = PAD * 2 + layout.rows.length * ROW;
  const open = (gap: GapRow) =>
    setOpened(new Map(opened).set(gap.run, (opened.get(gap.run) ?? 0) + OPEN_STEP));

  return (
    <div
      class="tree-scroll"
      ref={scroller}
      onScroll={(event) => {
        const el = event.currentTarget;
        setView({ top: el.scrollTop, height: el.clientHeight });
      }}
    >
      {/* biome-ignore lint/a11y/noNoninteractiveElementToInteractiveRole: the picture is the tree its checkpoints are items of */}
      <svg class="tree" width="100%" height={height} role="tree" aria-label="checkpoints">
        <g class="bands">
          {rows.map((r) =>
            r.kind === 'node' && (r.node.seq === selected || r.node.seq === compare) ? (
              <rect
                key={r.node.seq}
                class={r.node.seq === selected ? 'band band-selected' : 'band band-compared'}
                x={0}
                y={rowY(r.row) - ROW / 2}
                width="100%"
                height={ROW}
              />
            ) : null,
          )}
        </g>
        <g class="edges">
          {edges.map((e) => (
            <path
              key={`${e.fromRow}-${e.toRow}`}
              d={edgePath(e)}
              class={e.active ? 'edge edge-active' : 'edge'}
            />
          ))}
        </g>
        {rows.map((r) =>
          r.kind === 'gap' ? (
            // biome-ignore lint/a11y/useSemanticElements: an SVG group cannot be a <button>
            <g
              key={`gap-${r.run}`}
              class="gap"
              data-gap={r.run}
              transform={`translate(0,${rowY(r.row)})`}
              role="button"
              tabIndex={0}
              aria-label={`show ${r.hidden} more checkpoints`}
              onClick={() => open(r)}
              onKeyDown={(event) => {
                if (event.key === 'Enter' || event.key === ' ') open(r);
              }}
            >
              <rect class="hit" x={0} y={-ROW / 2} width="100%" height={ROW} />
              <circle cx={laneX(r.lane)} cy={0} r={3} class="gap-dot" />
              <text x={labelX} y={4} class="label gap-label">
                … {r.hidden.toLocaleString('en')} more ({r.first}–{r.last})
              </text>
            </g>
          ) : (
            <g
              key={r.node.seq}
              class={[
                'node',
                r.node.active ? 'active' : 'inactive',
                r.node.head ? 'head' : '',
                r.node.seq === selected ? 'selected' : '',
                r.node.seq === compare ? 'compared' : '',
              ].join(' ')}
              data-seq={r.node.seq}
              transform={`translate(0,${rowY(r.row)})`}
              role="treeitem"
              aria-selected={r.node.seq === selected}
              tabIndex={0}
              onClick={() => onSelect(r.node.seq)}
              onKeyDown={(event) => {
                if (event.key === 'Enter' || event.key === ' ') onSelect(r.node.seq);
              }}
            >
              <rect class="hit" x={0} y={-ROW / 2} width="100%" height={ROW} />
              {r.node.head && <circle cx={laneX(r.lane)} cy={0} r={8} class="head-ring" />}
              {r.node.pinned === true && (
                <rect
                  x={laneX(r.lane) - 6}
                  y={-6}
                  width={12}
                  height={12}
                  class="pin-mark"
                  transform={`rotate(45 ${laneX(r.lane)} 0)`}
                />
              )}
              <circle cx={laneX(r.lane)} cy={0} r={5} class="dot" />
              <NodeLabel r={r} detail={details.get(r.node.seq)} labelX={labelX} origin={origin} />
            </g>
          ),
        )}
      </svg>
    </div>
  );
}
