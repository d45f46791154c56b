/**
 * Live updates from the studio (server-sent events): the newest session of the catalog (of
 * the sessions whose id starts with a prefix and that have the tags filtered by), or one
 * session's summary, each time it changes.
 */
import { useEffect, useRef } from 'preact/hooks';
import type { SessionInfo } from './wire.js';

/**
 * Call `onChange` with the first session whose id starts with `prefix` and that has every tag
 * of `where` (`key=value` each) each time it changes (and once at the start).
 */
export function useCatalogLive(
  prefix: string,
  where: string[],
  onChange: (top: SessionInfo | null) => void,
): void {
  const params = new URLSearchParams();
  if (prefix !== '') params.set('prefix', prefix);
  for (const tag of where) params.append('where', tag);
  const text = params.toString();
  const query = text === '' ? '' : `?${text}`;
  useEvents(`/api/events${query}`, 'catalog', (data) =>
    onChange((data as { top: SessionInfo | null }).top),
  );
}

/** Call `onChange` with the session's summary (null once deleted) each time it changes. */
export function useSessionLive(id: string, onChange: (info: SessionInfo | null) => void): void {
  useEvents(`/api/events?session=${encodeURIComponent(id)}`, 'session', (data) =>
    onChange(data as SessionInfo | null),
  );
}

function useEvents(url: string, event: string, handle: (data: unknown) => void): void {
  const latest = useRef(handle);
  latest.current = handle;
  useEffect(() => {
    const source = new EventSource(url);
    const listener = (message: MessageEvent<string>) => latest.current(JSON.parse(message.data));
    source.addEventListener(event, listener);
    return () => source.close();
  }, [url, event]);
}
