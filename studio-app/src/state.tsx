/**
 * The state beside the checkpoints: its scopes, and each scope's keys with their values, a
 * page at a time. With `--write`, a value can be set or deleted, each asked first.
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { ask } from './confirm.js';
import { brief, JsonTree } from './json-tree.js';
import { DoneNote, ErrorNote } from './notes.js';
import { Link, pathOf } from './router.js';
import { useLoad } from './use-load.js';
import type { Json, Page } from './wire.js';

/** A listing read a page at a time: its items so far, and how to read the next page. */
function usePages<T>(read: (cursor: string | null) => Promise<Page<T>>, key: string) {
  const [again, setAgain] = useState(0);
  const first = useLoad(() => read(null), [key, again]);
  const [more, setMore] = useState<{ of: unknown; items: T[]; cursor: string | null }>({
    of: null,
    items: [],
    cursor: null,
  });
  const [error, setError] = useState<unknown>(null);
  // Later pages belong to the first page they were read after.
  const later = more.of === first.value ? more : { of: first.value, items: [], cursor: null };
  const cursor = later.items.length > 0 ? later.cursor : (first.value?.cursor ?? null);
  return {
    items: [...(first.value?.items ?? []), ...later.items],
    cursor,
    loaded: first.value !== null,
    error: first.error ?? error,
    more: async () => {
      try {
        const page = await read(cursor);
        setMore({ of: first.value, items: [...later.items, ...page.items], cursor: page.cursor });
      } catch (err) {
        setError(err);
      }
    },
    reload: () => setAgain((n) => n + 1),
  };
}

/** The state's scopes. */
export function Scopes() {
  const scopes = usePages((cursor) => api.scopes(cursor), 'scopes');
  return (
    <div class="state">
      <h1>State</h1>
      <ErrorNote error={scopes.error} />
      {scopes.loaded && scopes.items.length === 0 && <p class="empty">The store holds no state.</p>}
      <ul class="scopes">
        {scopes.items.map((scope) => (
          <li key={scope}>
            <Link href={pathOf({ view: 'scope', scope })}>{scope}</Link>
          </li>
        ))}
      </ul>
      {scopes.cursor !== null && (
        <button type="button" class="load-more" onClick={scopes.more}>
          Load more
        </button>
      )}
    </div>
  );
}

/** One scope's keys and values. */
export function Scope({ scope, write }: { scope: string; write: boolean }) {
  const entries = usePages((cursor) => api.entries(scope, cursor), scope);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const [key, setKey] = useState('');
  const [text, setText] = useState('');

  const change = async (what: () => Promise<string>) => {
    setError(null);
    setDone(null);
    try {
      setDone(await what());
      entries.reload();
    } catch (err) {
      setError(err);
    }
  };

  const set = async () => {
    let value: Json;
    try {
      value = JSON.parse(text) as Json;
    } catch {
      setError(
        new Error(`the value must be JSON, such as "dark" (with the quotes), 3 or {"a":1}.`),
      );
      return;
    }
    const ok = await ask({
      title: 'Set a state value',
      message: `Set key "${key}" of scope "${scope}" to ${brief(value, 200)}, replacing any value it has.`,
      confirm: 'Set',
    });
    if (ok === null) return;
    await change(async () => {
      await api.setState(scope, key, value);
      return `Set "${key}".`;
    });
  };

  const remove = async (k: string) => {
    const ok = await ask({
      title: 'Delete a state value',
      message: `Delete key "${k}" of scope "${scope}". This cannot be undone.`,
      confirm: 'Delete',
      danger: true,
    });
    if (ok === null) return;
    await change(async () => {
      await api.deleteState(scope, k);
      return `Deleted "${k}".`;
    });
  };

  return (
    <div class="state">
      <div class="crumbs">
        <Link href="/state">State</Link> /
      </div>
      <h1>{scope}</h1>
      <ErrorNote error={entries.error ?? error} />
      <DoneNote text={done} />
      {write && (
        <form
          class="set-form"
          onSubmit={(event) => {
            event.preventDefault();
            set();
          }}
        >
          <input
            aria-label="key"
            placeholder="key"
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
            required
          />
          <textarea
            aria-label="value (JSON)"
            placeholder='value, as JSON: "dark", 3, {"a":1}'
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            required
          />
          <button type="submit">Set…</button>
        </form>
      )}
      {entries.loaded && entries.items.length === 0 && (
        <p class="empty">This scope holds no values.</p>
      )}
      <table class="entries">
        <thead>
          <tr>
            <th>Key</th>
            <th>Value</th>
            {write && <th />}
          </tr>
        </thead>
        <tbody>
          {entries.items.map((e) => (
            <tr key={e.key} data-key={e.key}>
              <td class="id">{e.key}</td>
              <td>
                <JsonTree value={e.value} open={1} />
              </td>
              {write && (
                <td>
                  <button type="button" class="danger" onClick={() => remove(e.key)}>
                    Delete…
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {entries.cursor !== null && (
        <button type="button" class="load-more" onClick={entries.more}>
          Load more
        </button>
      )}
    </div>
  );
}
