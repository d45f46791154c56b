/** Times as the page shows them: as the `ckpt` command prints them, and how long ago. */

/** `2026-12-05 10:00:01Z` (UTC, to the second), as `ckpt` prints times. */
export function shortTime(iso: string): string {
  return `${iso.slice(0, 19).replace('T', ' ')}Z`;
}

/** How long ago `iso` was, roughly: `12 s ago`, `3 min ago`, `5 h ago`, `2 d ago`. */
export function ago(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}
