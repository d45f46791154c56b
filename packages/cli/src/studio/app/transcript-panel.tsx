/**
 * The transcript of the session's active timeline, oldest at the top: the newest page first,
 * and older pages on demand ("Load older"), each item by its kind.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { ItemView } from './item-view.js';
import { ErrorNote } from './notes.js';
import { shortTime } from './time.js';
import type { TranscriptEntry } from './wire.js';

/** The transcript of session `id`; `version` changes when the session changes. */
export function TranscriptPanel({ id, version }: { id: string; version: number }) {
  const [entries, setEntries] = useState<TranscriptEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let live = true;
    api
      .transcript(id, null)
      .then((page) => {
        if (!live) return;
        setEntries([...page.items].reverse());
        setCursor(page.cursor);
        setLoaded(true);
        setError(null);
      })
      .catch((err: unknown) => live && setError(err));
    return () => {
      live = false;
    };
  }, [id, version]);

  const older = async () => {
    setBusy(true);
    try {
      const page = await api.transcript(id, cursor);
      setEntries([...[...page.items].reverse(), ...entries]);
      setCursor(page.cursor);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="transcript" aria-label="transcript">
      <ErrorNote error={error} />
      {cursor !== null && (
        <button type="button" class="load-older" disabled={busy} onClick={older}>
          Load older
        </button>
      )}
      {loaded && entries.length === 0 && (
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
