/**
 * One checkpoint: its metadata and data as JSON trees, the transcript items it added, and
 * what changed since its parent, or since another checkpoint picked in the tree.
 */
import type { ComponentChildren } from 'preact';
import { api } from './api.js';
import { ItemView } from './item-view.js';
import { brief, JsonTree } from './json-tree.js';
import { ErrorNote } from './notes.js';
import { shortTime } from './time.js';
import { useLoad } from './use-load.js';
import type { Change } from './wire.js';

/** What the panel shows, and the changes it offers. */
export interface CheckpointPanelProps {
  id: string;
  seq: number;
  /** The checkpoint to compare with, or null for the parent. */
  compare: number | null;
  /** Whether the next click in the tree picks the checkpoint to compare with. */
  picking: boolean;
  setPicking(on: boolean): void;
  clearCompare(): void;
  /** Changes when the session changes, to read again. */
  version: number;
  /** The buttons of the changes allowed (none when read-only). */
  actions: ComponentChildren;
}

const OP_MARK = { add: '+', remove: '−', change: '~' } as const;

function DiffList({ changes }: { changes: Change[] }) {
  if (changes.length === 0) return <p class="empty">No changes: data and metadata are the same.</p>;
  return (
    <ul class="diff" aria-label="changes">
      {changes.map((c) => (
        <li key={`${c.op} ${c.path}`} class={`change op-${c.op}`} data-op={c.op} data-path={c.path}>
          <span class="op">{OP_MARK[c.op]}</span>
          <code class="path">{c.path === '' ? '(the whole value)' : c.path}</code>
          {c.op !== 'add' && (
            <code class="before" title={JSON.stringify(c.before)}>
              {brief(c.before, 120)}
            </code>
          )}
          {c.op === 'change' && <span class="arrow">→</span>}
          {c.op !== 'remove' && (
            <code class="after" title={JSON.stringify(c.after)}>
              {brief(c.after, 120)}
            </code>
          )}
        </li>
      ))}
    </ul>
  );
}

/** The checkpoint `seq` of session `id`. */
export function CheckpointPanel(props: CheckpointPanelProps) {
  const { id, seq, compare, version } = props;
  const { value: shown, error } = useLoad(() => api.show(id, seq), [id, seq, version]);
  const { value: diffed, error: diffError } = useLoad(
    async () => ({ key: `${seq} ${compare}`, changes: await api.diff(id, seq, compare) }),
    [id, seq, compare, version],
  );
  // Changes read for another pair stay out of view until those of this pair come.
  const changes = diffed?.key === `${seq} ${compare}` ? diffed.changes : null;

  const cp = shown?.checkpoint.seq === seq ? shown.checkpoint : null;
  const against =
    compare !== null
      ? `checkpoint ${compare} (picked)`
      : cp === null
        ? '…'
        : cp.parent === null
          ? 'nothing: the session starts here'
          : `checkpoint ${cp.parent} (its parent)`;

  return (
    <section class="checkpoint" aria-label={`checkpoint ${seq}`}>
      <ErrorNote error={error} />
      <header class="panel-head">
        <h2>Checkpoint {seq}</h2>
        {cp && (
          <p class="facts">
            parent {cp.parent ?? 'none'} · {shortTime(cp.createdAt)}
            {cp.pinned === true && <span class="tag tag-pin">pinned</span>}
            {shown && shown.info.head === seq && <span class="tag tag-head">head</span>}
          </p>
        )}
        <div class="actions">{props.actions}</div>
      </header>
      <h3>Changes since {against}</h3>
      <div class="diff-controls">
        <button
          type="button"
          class={props.picking ? 'primary' : ''}
          aria-pressed={props.picking}
          onClick={() => props.setPicking(!props.picking)}
        >
          {props.picking ? 'Click a checkpoint in the tree…' : 'Compare with another checkpoint'}
        </button>
        {compare !== null && (
          <button type="button" onClick={props.clearCompare}>
            Compare with its parent
          </button>
        )}
      </div>
      <ErrorNote error={diffError} />
      {changes !== null && <DiffList changes={changes} />}
      {cp && (
        <>
          <h3>Metadata</h3>
          <JsonTree value={cp.metadata} />
          <h3>Data</h3>
          <JsonTree value={cp.data} />
        </>
      )}
      {shown && shown.checkpoint.seq === seq && shown.transcript.length > 0 && (
        <>
          <h3>Transcript items it added</h3>
          <ol class="items">
            {shown.transcript.map((item, i) => (
              <li class="item" key={i}>
                <ItemView item={item} />
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
