/**
 * `ckpt studio`'s web server (node:http, nothing else): the front end's files, the JSON API
 * under `/api/`, and the checks every request passes first (see auth.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CheckpointStore, CkptError } from '@ckpt/core';
import { type ApiContext, readJsonBody, route, writable } from './api.js';
import { type Asset, defaultAssetsDir, loadAssets } from './assets.js';
import {
  checkRequest,
  checkWrite,
  type Guard,
  NO_TOKEN_PAGE,
  newToken,
  opensPage,
  tokenCookie,
} from './auth.js';
import { errorResponse, messenger, StudioError } from './errors.js';
import { ForkIndex } from './fork-index.js';
import { Live, POLL_MS } from './live.js';
import { SessionTrees } from './session-trees.js';

/** How to start a studio. */
export interface StudioOptions {
  store: CheckpointStore;
  /** The URL the store was opened from: never sent to the page, and taken out of every message. */
  storeUrl: string;
  /** The address to listen on (default 127.0.0.1, this machine only). */
  host?: string;
  /** The port (0: any free one). */
  port: number;
  /** Whether the page may change the store. */
  write?: boolean;
  /** The folder of the built front end (default: `studio/` beside the command). */
  assetsDir?: string;
  /** How often live views read a store that cannot watch its changes, in ms (one that can is read when it changes). */
  pollMs?: number;
  /** The names of the keys the store was opened with (never their bytes), for the messages on a value sealed under another. */
  keyNames?: string[];
}

/** A running studio. */
export interface Studio {
  /** The address to open, with the token: `http://127.0.0.1:4280/?token=…`. */
  url: string;
  /** The origin the page is served at. */
  origin: string;
  port: number;
  /** Stop serving (the store stays open). */
  close(): Promise<void>;
}

/** How long after the start the catalog is first walked for forks. */
const WARM_AFTER_MS = 2000;

/** The loopback addresses: listening there, the studio answers only under this machine's names for it. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/** A port that cannot be listened on, said as what to do. */
function listenError(err: NodeJS.ErrnoException, host: string, port: number): Error {
  if (err.code === 'EADDRINUSE') {
    return new CkptError(
      'CONFLICT',
      `port ${port} on ${host} is in use; pick another with --port, or --port 0 for any free one.`,
      { details: { argument: 'port' } },
    );
  }
  if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND' || err.code === 'EACCES') {
    return new CkptError(
      'INVALID_ARGUMENT',
      `cannot listen on ${host}:${port} (${err.code}); give --host an address of this machine and --port one you may use.`,
      { details: { argument: err.code === 'EACCES' ? 'port' : 'host' } },
    );
  }
  return err;
}

/** Headers on every answer: no framing (so no click can be stolen), no sniffing, no referrer. */
const COMMON_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** The page may load only its own files and talk only to its own server. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** A 401 names the scheme that gets in, as HTTP asks of it. */
const challenge = (status: number) =>
  status === 401 ? { 'www-authenticate': 'Bearer realm="ckpt studio"' } : {};

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    ...COMMON_HEADERS,
    ...challenge(status),
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
  });
  res.end(body);
}

function sendPage(res: ServerResponse, status: number, html: string, head: boolean): void {
  res.writeHead(status, {
    ...COMMON_HEADERS,
    ...challenge(status),
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': CONTENT_SECURITY_POLICY,
  });
  res.end(head ? undefined : html);
}

function sendAsset(res: ServerResponse, asset: Asset, head: boolean): void {
  res.writeHead(200, {
    ...COMMON_HEADERS,
    'content-type': asset.type,
    'content-length': asset.body.length,
    'cache-control': asset.immutable ? 'private, max-age=31536000, immutable' : 'no-store',
    ...(asset.type.startsWith('text/html')
      ? { 'content-security-policy': CONTENT_SECURITY_POLICY }
      : {}),
  });
  res.end(head ? undefined : asset.body);
}

/** The path's segments after `/api/`, decoded (a session id may hold `/`, sent as `%2F`). */
function apiSegments(pathname: string): string[] {
  try {
    return pathname
      .slice('/api/'.length)
      .split('/')
      .filter((part, i, parts) => part !== '' || i < parts.length - 1)
      .map(decodeURIComponent);
  } catch {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `the path ${JSON.stringify(pathname)} is not valid percent-encoding; encode ids with encodeURIComponent.`,
      { details: { argument: 'path' } },
    );
  }
}

/** Start a studio on `options.store`; resolves once it listens. */
export async function startStudio(options: StudioOptions): Promise<Studio> {
  const host = options.host ?? '127.0.0.1';
  const assets = loadAssets(options.assetsDir ?? defaultAssetsDir());
  const say = messenger(options.storeUrl, options.keyNames ?? []);
  const forks = new ForkIndex(options.store);
  const live = new Live(options.store, say, options.pollMs ?? POLL_MS);
  const ctx: ApiContext = {
    store: options.store,
    write: options.write === true,
    trees: new SessionTrees(options.store, forks),
  };
  const guard: Guard = { token: newToken(), port: 0, hosts: null };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://studio.invalid');
    checkRequest(req, url, guard);
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      // A read-only studio says so first: no header or origin would make the change go.
      writable(ctx);
      checkWrite(req);
    }
    if (url.pathname.startsWith('/api/')) {
      const answer = await route(
        {
          method,
          segments: apiSegments(url.pathname),
          query: url.searchParams,
          body: () => readJsonBody(req),
        },
        ctx,
      );
      if ('live' in answer) live.serve(res, answer.live);
      else sendJson(res, answer.status ?? 200, answer.json);
      return;
    }
    if (method !== 'GET' && method !== 'HEAD') {
      throw new StudioError(405, 'INVALID_ARGUMENT', `${method} is only for /api/ routes.`);
    }
    // The first visit carries the token in the address: keep it in a cookie, and take it out of the address.
    if (url.searchParams.has('token')) {
      url.searchParams.delete('token');
      res.writeHead(303, {
        ...COMMON_HEADERS,
        'set-cookie': tokenCookie(guard.port, guard.token),
        location: `${url.pathname}${url.search}`,
        'cache-control': 'no-store',
      });
      res.end();
      return;
    }
    const asset = assets.get(url.pathname);
    if (asset !== undefined && url.pathname !== '/index.html') {
      sendAsset(res, asset, method === 'HEAD');
      return;
    }
    if (url.pathname.startsWith('/assets/')) {
      throw new StudioError(404, 'NOT_FOUND', `the studio has no file ${url.pathname}.`);
    }
    // Any other path is a view of the page (/sessions/…, /state/…), which draws itself.
    sendAsset(res, assets.get('/index.html')!, method === 'HEAD');
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const { status, body } = errorResponse(err, say);
      if (status === 401 && opensPage(req)) {
        sendPage(res, status, NO_TOKEN_PAGE, req.method === 'HEAD');
      } else sendJson(res, status, body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(listenError(err, host, options.port)),
    );
    server.listen(options.port, host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  guard.port = port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  if (LOOPBACK.has(host)) {
    guard.hosts = new Set(
      [shownHost, '127.0.0.1', 'localhost', '[::1]'].map((name) => `${name}:${port}`),
    );
  }
  // The first walk of the catalog for forks starts a moment after the start, so that it does
  // not hold up the first page a browser asks for.
  setTimeout(() => forks.warm(), WARM_AFTER_MS).unref();
  const origin = `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : shownHost}:${port}`;
  return {
    url: `${origin}/?token=${guard.token}`,
    origin,
    port,
    async close() {
      live.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
