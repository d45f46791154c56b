/**
 * The catalog: every session, most recently updated first, fifty at a time (the next page
 * loads as the end of the list comes into view), searchable by id prefix and filtered by tags,
 * following the store live.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { useCatalogLive } from './live.js';
import { ErrorNote } from './notes.js';
import { Link, navigate, pathOf, sessionPath } from './router.js';
import { TagFilter, TagList, withTag } from './tag-filter.js';
import { ago, shortTime } from './time.js';
import type { SessionInfo } from './wire.js';

/**
 * The catalog, showing the sessions whose id starts with `prefix` and that have every tag of
 * `where` (`key=value` each).
 */
export function Catalog({ prefix, where }: { prefix: string; where: string[] }) {
  const [items, setItems] = useState<SessionInfo[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [search, setSearch] = useState(prefix);
  const [stale, setStale] = useState(false);
  const sentinel = useRef<HTMLDivElement>(null);
  const request = useRef(0);

  const first = () => {
    const mine = ++request.current;
    setBusy(true);
    api
      .sessions(prefix, where, null)
      .then((page) => {
        if (mine !== request.current) return;
        setItems(page.items);
        setCursor(page.cursor);
        setLoaded(true);
        setStale(false);
        setError(null);
        requestAnimationFrame(() => performance.mark('ckpt:catalog-drawn'));
      })
      .catch((err: unknown) => mine === request.current && setError(err))
      .finally(() => mine === request.current && setBusy(false));
  };

  // The first page is read again when the prefix or the tags change, and only then.
  const filter = JSON.stringify([prefix, where]);
  useEffect(() => {
    setSearch(prefix);
    setLoaded(false);
    first();
  }, [filter]);

  const more = () => {
    if (busy || cursor === null) return;
    const mine = ++request.current;
    setBusy(true);
    api
      .sessions(prefix, where, cursor)
      .then((page) => {
        if (mine !== request.current) return;
        setItems((shown) => [...shown, ...page.items]);
        setCursor(page.cursor);
      })
      .catch((err: unknown) => mine === request.current && setError(err))
      .finally(() => mine === request.current && setBusy(false));
  };

  // The next page loads when the end of the list comes into view.
  useEffect(() => {
    const el = sentinel.current;
    if (el === null || cursor === null) return;
    const observer = new IntersectionObserver((seen) => {
      if (seen.some((e) => e.isIntersecting)) more();
    });
    observer.observe(el);
    return () => observer.disconnect();
  });

  // A change among the sessions searched for: with only the first page shown, read it again;
  // further down, offer to.
  useCatalogLive(prefix, where, (top) => {
    if (!loaded) return;
    const shownTop = items[0];
    const same =
      (top === null && shownTop === undefined) ||
      (top !== null &&
        shownTop !== undefined &&
        top.sessionId === shownTop.sessionId &&
        top.updatedAt === shownTop.updatedAt &&
        top.head === shownTop.head);
    if (same) return;
    if (items.length <= 50 && window.scrollY < 200) first();
    else setStale(true);
  });

  // The search follows the typing, a moment after it stops.
  useEffect(() => {
    if (search === prefix) return;
    const timer = setTimeout(
      () => navigate(pathOf({ view: 'catalog', prefix: search, where }), true),
      250,
    );
    return () => clearTimeout(timer);
  }, [search, prefix]);

  return (
    <div class="catalog">
      <header class="catalog-head">
        <h1>Sessions</h1>
        <input
          type="search"
          class="search"
          placeholder="Session id starts with…"
          aria-label="search by id prefix"
          value={search}
          onInput={(event) => setSearch(event.currentTarget.value)}
        />
        <TagFilter
          where={where}
          onChange={(tags) => navigate(pathOf({ view: 'catalog', prefix: search, where: tags }))}
        />
      </header>
      {stale && (
        <button
          type="button"
          class="note note-stale"
          onClick={() => {
            window.scrollTo(0, 0);
            first();
          }}
        >
          Sessions changed since this list was read: show the newest
        </button>
      )}
      <ErrorNote error={error} />
      <table class="sessions">
        <thead>
          <tr>
            <th>Session</th>
            <th class="num">Head</th>
            <th class="num">Checkpoints</th>
            <th>Forked from</th>
            <th>Updated</th>
            <th>Created</th>
            <th>Tags</th>
          </tr>
        </thead>
        <tbody>
          {items.map((s) => (
            <tr key={s.sessionId} data-session={s.sessionId}>
              <td class="id">
                <Link href={sessionPath(s.sessionId)}>{s.sessionId}</Link>
              </td>
              <td class="num">{s.head}</td>
              <td class="num">{s.checkpoints.toLocaleString('en')}</td>
              <td>
                {s.forkedFrom && (
                  <Link href={sessionPath(s.forkedFrom.sessionId, s.forkedFrom.seq)}>
                    {s.forkedFrom.sessionId} at {s.forkedFrom.seq}
                  </Link>
                )}
              </td>
              <td title={s.updatedAt}>{ago(s.updatedAt)}</td>
              <td>{shortTime(s.createdAt)}</td>
              <td class="tags-cell">
                <TagList
                  tags={s.tags}
                  href={(key, value) =>
                    pathOf({ view: 'catalog', prefix, where: withTag(where, key, value) })
                  }
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {loaded && items.length === 0 && <p class="empty">{noneFound(prefix, where)}</p>}
      <div ref={sentinel} class="sentinel" />
      {cursor !== null && (
        <button type="button" class="load-more" disabled={busy} onClick={more}>
          {busy ? 'Loading…' : 'Load more'}
        </button>
      )}
    </div>
  );
}

/** What an empty catalog says: that the store is empty, or that nothing matched. */
function noneFound(prefix: string, where: string[]): string {
  if (where.length === 0) {
    return prefix === ''
      ? 'The store has no sessions yet.'
      : `No session id starts with "${prefix}".`;
  }
  const id = prefix === '' ? '' : ` and an id that starts with "${prefix}"`;
  return `No session has the ${where.length === 1 ? 'tag' : 'tags'} ${where.join(', ')}${id}.`;
}
