/**
 * A JSON value as a tree to fold and unfold: objects and arrays show their size when folded,
 * and open on a click; a large one shows its first children and more on demand, so that a
 * big checkpoint stays quick to show.
 */
import { useState } from 'preact/hooks';
import type { Json } from './wire.js';

/** How many children of an object or array are shown before "more". */
const CHILDREN_STEP = 100;

const isContainer = (v: Json): v is Json[] | { [key: string]: Json } =>
  typeof v === 'object' && v !== null;

/** A value that is not an object or array, coloured by its type. */
export function Scalar({ value }: { value: Json }) {
  if (value === null) return <span class="j-null">null</span>;
  if (typeof value === 'string') return <span class="j-string">{JSON.stringify(value)}</span>;
  if (typeof value === 'number') return <span class="j-number">{String(value)}</span>;
  if (typeof value === 'boolean') return <span class="j-bool">{String(value)}</span>;
  return <span>{JSON.stringify(value)}</span>;
}

/** A JSON value on one line, cut to `max` characters. */
export function brief(value: Json | undefined, max = 80): string {
  const text = value === undefined ? '' : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function Node({
  name,
  value,
  depth,
  open,
}: {
  name: string | null;
  value: Json;
  depth: number;
  open: number;
}) {
  const [expanded, setExpanded] = useState(depth < open);
  const [shown, setShown] = useState(CHILDREN_STEP);
  const label = name === null ? null : <span class="j-key">{name}: </span>;
  if (!isContainer(value)) {
    return (
      <div class="j-row">
        {label}
        <Scalar value={value} />
      </div>
    );
  }
  const array = Array.isArray(value);
  const entries: [string, Json][] = array
    ? value.map((v, i) => [String(i), v])
    : Object.keys(value).map((k) => [k, Object.getOwnPropertyDescriptor(value, k)!.value as Json]);
  const [openMark, closeMark] = array ? ['[', ']'] : ['{', '}'];
  const size = `${entries.length} ${array ? (entries.length === 1 ? 'item' : 'items') : entries.length === 1 ? 'key' : 'keys'}`;
  if (entries.length === 0) {
    return (
      <div class="j-row">
        {label}
        <span class="j-punct">
          {openMark}
          {closeMark}
        </span>
      </div>
    );
  }
  return (
    <div class="j-node">
      <button
        type="button"
        class="j-toggle"
        aria-expanded={expanded}
        onClick={() => setExpanded(!expanded)}
      >
        <span class="j-caret">{expanded ? '▾' : '▸'}</span>
        {label}
        <span class="j-punct">{openMark}</span>
        {!expanded && (
          <span class="j-summary">
            {' '}
            {size} <span class="j-punct">{closeMark}</span>
          </span>
        )}
      </button>
      {expanded && (
        <div class="j-children">
          {entries.slice(0, shown).map(([k, v]) => (
            <Node
              key={k}
              name={array ? k : JSON.stringify(k).slice(1, -1)}
              value={v}
              depth={depth + 1}
              open={open}
            />
          ))}
          {entries.length > shown && (
            <button type="button" class="link" onClick={() => setShown(shown + CHILDREN_STEP)}>
              … {entries.length - shown} more
            </button>
          )}
          <div class="j-punct">{closeMark}</div>
        </div>
      )}
    </div>
  );
}

/** `value` as a foldable tree, open `open` levels deep. */
export function JsonTree({ value, open = 2 }: { value: Json; open?: number }) {
  return (
    <div class="json">
      <Node name={null} value={value} depth={0} open={open} />
    </div>
  );
}
