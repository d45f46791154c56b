/**
 * The transcript of the session's active timeline, oldest at the top: the newest page first,
 * and older pages on demand ("Load older"), each item by its kind.
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { ItemView } from './item-view.js';
import { ErrorNote } from './notes.js';
import { shortTime } from './time.js';
import { useLoad } from './use-load.js';
import type { TranscriptEntry } from './wire.js';

/** The transcript of session `id`; `version` changes when the session changes. */
export function TranscriptPanel({ id, version }: { id: string; version: number }) {
  const first = useLoad(() => api.transcript(id, null), [id, version]);
  /** The pages before the first, oldest first, and the cursor of the one before them. */
  const [older, setOlder] = useState<{
    of: unknown;
    entries: TranscriptEntry[];
    cursor: string | null;
  }>({
    of: null,
    entries: [],
    cursor: null,
  });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // Older pages belong to the first page they were read after; a new first page starts again.
  const earlier = older.of === first.value ? older : { of: first.value, entries: [], cursor: null };
  const cursor =
    earlier.of === null
      ? null
      : earlier.entries.length > 0
        ? earlier.cursor
        : (first.value?.cursor ?? null);
  const entries = [...earlier.entries, ...[...(first.value?.items ?? [])].reverse()];

  const loadOlder = async () => {
    setBusy(true);
    try {
      const page = await api.transcript(id, cursor);
      setOlder({
        of: first.value,
        entries: [...[...page.items].reverse(), ...earlier.entries],
        cursor: page.cursor,
      });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="transcript" aria-label="transcript">
      <ErrorNote error={first.error ?? error} />
      {cursor !== null && (
        <button type="button" class="load-older" disabled={busy} onClick={loadOlder}>
          Load older
        </button>
      )}
      {first.value !== null && entries.length === 0 && (
        <p class="empty">The active timeline has no transcript items.</p>
      )}
      <ol class="items">
        {entries.map((e) => (
          <li key={`${e.seq}-${e.index}`} class="item" data-seq={e.seq}>
            <div class="item-meta" title={e.createdAt}>
              <span class="item-seq">{e.seq}</span> {shortTime(e.createdAt)}
            </div>
            <ItemView item={e.item} />
          </li>
        ))}
      </ol>
    </section>
  );
}
