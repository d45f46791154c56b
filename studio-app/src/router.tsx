/**
 * The page's views as addresses, so that each can be bookmarked, reloaded and gone back to:
 * `/` the catalog (`?prefix=`, and `&where=key%3Dvalue` for each tag it is filtered by),
 * `/sessions/<id>` a session (`?seq=` a checkpoint, `&vs=` the one it is compared with,
 * `&tab=transcript`), `/state` the scopes, `/state/<scope>` one.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** A view and what it shows. */
export type Route =
  | { view: 'catalog'; prefix: string; where: string[] }
  | {
      view: 'session';
      id: string;
      seq: number | null;
      vs: number | null;
      tab: 'checkpoint' | 'transcript';
    }
  | { view: 'scopes' }
  | { view: 'scope'; scope: string }
  | { view: 'missing'; path: string };

const NAVIGATED = 'ckpt:navigate';

const number = (text: string | null) => (text !== null && /^\d+$/.test(text) ? Number(text) : null);

/** The route of the current address. */
export function currentRoute(): Route {
  const { pathname, search } = window.location;
  const q = new URLSearchParams(search);
  const parts = pathname.split('/').filter((p) => p !== '');
  try {
    if (parts.length === 0) {
      return { view: 'catalog', prefix: q.get('prefix') ?? '', where: q.getAll('where') };
    }
    if (parts[0] === 'sessions' && parts.length === 2) {
      return {
        view: 'session',
        id: decodeURIComponent(parts[1]!),
        seq: number(q.get('seq')),
        vs: number(q.get('vs')),
        tab: q.get('tab') === 'transcript' ? 'transcript' : 'checkpoint',
      };
    }
    if (parts[0] === 'state' && parts.length === 1) return { view: 'scopes' };
    if (parts[0] === 'state' && parts.length === 2) {
      return { view: 'scope', scope: decodeURIComponent(parts[1]!) };
    }
  } catch {
    // A malformed escape: no such view.
  }
  return { view: 'missing', path: pathname };
}

/** The address of a view. */
export function pathOf(route: Route): string {
  const q = (params: Record<string, string | number | null | string[]>) => {
    const s = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
      for (const one of Array.isArray(v) ? v : [v]) {
        if (one !== null && one !== '') s.append(k, String(one));
      }
    }
    const text = s.toString();
    return text === '' ? '' : `?${text}`;
  };
  switch (route.view) {
    case 'catalog':
      return `/${q({ prefix: route.prefix, where: route.where })}`;
    case 'session':
      return `/sessions/${encodeURIComponent(route.id)}${q({
        seq: route.seq,
        vs: route.vs,
        tab: route.tab === 'transcript' ? 'transcript' : null,
      })}`;
    case 'scopes':
      return '/state';
    case 'scope':
      return `/state/${encodeURIComponent(route.scope)}`;
    case 'missing':
      return route.path;
  }
}

/** The address of the catalog of the sessions that have the tag `key=value`. */
export const taggedPath = (key: string, value: string) =>
  pathOf({ view: 'catalog', prefix: '', where: [`${key}=${value}`] });

/** The address of a session's view. */
export const sessionPath = (id: string, seq: number | null = null) =>
  pathOf({ view: 'session', id, seq, vs: null, tab: 'checkpoint' });

/** Go to `path` (replacing the current entry of the history when `replace`). */
export function navigate(path: string, replace = false): void {
  if (replace) window.history.replaceState(null, '', path);
  else window.history.pushState(null, '', path);
  window.dispatchEvent(new Event(NAVIGATED));
}

/** The current route, following navigation and the browser's back and forward. */
export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  return route;
}

/** A link to a view of the page, followed without reloading it. */
export function Link(props: {
  href: string;
  class?: string;
  title?: string;
  children: ComponentChildren;
}) {
  return (
    <a
      href={props.href}
      class={props.class}
      title={props.title}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
          return;
        event.preventDefault();
        navigate(props.href);
      }}
    >
      {props.children}
    </a>
  );
}
