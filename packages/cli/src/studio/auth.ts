/**
 * Who may talk to the studio. It answers only a request that carries its one-time token (in
 * the address it printed, then in a cookie the first visit sets), under a host name it is
 * served at (so that a site whose name was pointed at this machine cannot reach it), and it
 * changes the store only for a request that its own page made: one with the `x-ckpt-studio`
 * header, which no form and no other site's script can send without the browser asking this
 * server first (and it never agrees), and an `Origin` that is its own.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { StudioError } from './errors.js';

/** The header the studio's page sets on every change it asks for. */
export const WRITE_HEADER = 'x-ckpt-studio';

/** A new token: 32 random bytes, URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The cookie's name: one per port, since a browser keeps cookies per host name, not per port. */
export function cookieName(port: number): string {
  return `ckpt_studio_${port}`;
}

/** The cookie that keeps the token after the first visit: never readable by scripts, never sent by another site. */
export function tokenCookie(port: number, token: string): string {
  return `${cookieName(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}

/** Whether `given` is `token`, compared in a time that does not depend on where they differ. */
export function sameToken(given: string, token: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/** The tokens a request carries: in its cookie, an `Authorization: Bearer` header or `?token=`. */
function tokensOf(req: IncomingMessage, url: URL, port: number): string[] {
  const found: string[] = [];
  const name = `${cookieName(port)}=`;
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const cookie = part.trim();
    if (cookie.startsWith(name)) found.push(cookie.slice(name.length));
  }
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  if (bearer) found.push(bearer[1]!);
  const query = url.searchParams.get('token');
  if (query !== null) found.push(query);
  return found;
}

/** What the studio checks every request against. */
export interface Guard {
  token: string;
  port: number;
  /** The host names (with port) the studio answers at, or null for any (`--host` given). */
  hosts: Set<string> | null;
}

/** Refuse a request for another host name, or without the token. */
export function checkRequest(req: IncomingMessage, url: URL, guard: Guard): void {
  const host = req.headers.host ?? '';
  if (guard.hosts !== null && !guard.hosts.has(host.toLowerCase())) {
    throw new StudioError(
      403,
      'FORBIDDEN',
      `this studio answers at ${[...guard.hosts][0]} only, not at ${JSON.stringify(host)}; open the address ckpt studio printed.`,
    );
  }
  if (!tokensOf(req, url, guard.port).some((given) => sameToken(given, guard.token))) {
    throw new StudioError(
      401,
      'UNAUTHORIZED',
      'this request has no valid token; open the address ckpt studio printed (it carries the token), or send the token as "Authorization: Bearer <token>".',
    );
  }
}

/** Whether `req` is a browser opening one of the page's views, which shows HTML, rather than a call to the API. */
export function opensPage(req: IncomingMessage): boolean {
  return !(req.url ?? '/').startsWith('/api/') && /\btext\/html\b/i.test(req.headers.accept ?? '');
}

/**
 * What a browser that opens the studio without the token is shown (with status 401): a person
 * who typed the address without its token, or kept a tab or bookmark from an earlier start,
 * needs to know where the token is, not a JSON error.
 */
export const NO_TOKEN_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ckpt studio: open the address it printed</title>
</head>
<body>
<h1>ckpt studio needs its token</h1>
<p>Open the address that <code>ckpt studio</code> printed where it was started, the one that
ends in <code>/?token=…</code>. The token in it lets this browser in, and is kept in a cookie
for as long as this studio runs.</p>
<p>The token is new each time <code>ckpt studio</code> starts: an address, tab or bookmark
from an earlier start no longer opens it.</p>
</body>
</html>
`;

/** Refuse a change that the studio's own page did not ask for. */
export function checkWrite(req: IncomingMessage): void {
  if (req.headers[WRITE_HEADER] !== '1') {
    throw new StudioError(
      403,
      'FORBIDDEN',
      `a change needs the header "${WRITE_HEADER}: 1", which the studio's page sets; nothing was changed.`,
    );
  }
  const own = `http://${req.headers.host ?? ''}`;
  if (req.headers.origin !== own) {
    throw new StudioError(
      403,
      'FORBIDDEN',
      `a change must come from the studio's own page (Origin ${own}), ${req.headers.origin === undefined ? 'and this one has no Origin' : `not from ${JSON.stringify(req.headers.origin)}`}; nothing was changed.`,
    );
  }
}
