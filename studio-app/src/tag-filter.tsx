/**
 * Tags on the page: a session's, each a link to the sessions that have it too; and the
 * catalog's filter, tags typed as `key=value` (the server checks them, as `ckpt sessions
 * --where` does), each shown with a button that takes it away.
 */
import { useState } from 'preact/hooks';
import { Link } from './router.js';
import { tagPair } from './wire.js';

/** The filter `where` with the tag `key=value`, in place of another value of that key. */
export function withTag(where: string[], key: string, value: string): string[] {
  return [...where.filter((text) => tagPair(text)?.[0] !== key), `${key}=${value}`];
}

/** `tags` as chips, each a link to `href(key, value)`. */
export function TagList({
  tags,
  href,
}: {
  tags: { [key: string]: string };
  href: (key: string, value: string) => string;
}) {
  return (
    <span class="tag-list">
      {Object.entries(tags).map(([key, value]) => (
        <Link
          key={key}
          href={href(key, value)}
          class="chip"
          title={`the sessions with ${key}=${value}`}
        >
          <span class="chip-key">{key}</span>=<span class="chip-value">{value}</span>
        </Link>
      ))}
    </span>
  );
}

/** The tags the catalog is filtered by, and a box to type another into (Enter adds it). */
export function TagFilter({
  where,
  onChange,
}: {
  where: string[];
  onChange: (where: string[]) => void;
}) {
  const [draft, setDraft] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  const add = (event: Event) => {
    event.preventDefault();
    // A key holds no space, so spaces before it are a slip; a value's are its own.
    const text = draft.trimStart();
    if (text === '') return;
    const pair = tagPair(text);
    if (pair === null) {
      setProblem('A tag is key=value, such as user=ann.');
      return;
    }
    setDraft('');
    setProblem(null);
    onChange(withTag(where, pair[0], pair[1]));
  };

  return (
    <form class="tag-filter" onSubmit={add}>
      {where.map((text) => (
        <span key={text} class="chip" data-tag={text}>
          {text}
          <button
            type="button"
            class="chip-remove"
            aria-label={`remove the tag filter ${text}`}
            onClick={() => onChange(where.filter((other) => other !== text))}
          >
            ×
          </button>
        </span>
      ))}
      <input
        type="text"
        class="tag-input"
        placeholder="Tag key=value, then Enter"
        aria-label="filter by tag (key=value)"
        value={draft}
        onInput={(event) => {
          setDraft(event.currentTarget.value);
          setProblem(null);
        }}
      />
      {problem !== null && (
        <span class="tag-problem" role="alert">
          {problem}
        </span>
      )}
    </form>
  );
}
