/**
 * The example's server on `node:http`: the built page from `dist/`, and the chat's API on a
 * SQLite file through `@ckpt/ai-sdk`, its answers resumable through Redis when one is given.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { CkptChatStore } from '@ckpt/ai-sdk';
import { chatModel } from './model.js';
import { chatRoutes, errorResponse } from './routes.js';
import { openStreams, type StreamOptions } from './streams.js';

/** Where `vite build` puts the page. */
export const PAGE_DIR = fileURLToPath(new URL('../dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** A running server: its address, its chats, and how to stop it. */
export interface ChatServer {
  url: string;
  chats: CkptChatStore;
  close(): Promise<void>;
}

/** How the server is started. */
export interface ServerOptions {
  /** The SQLite file the chats are kept in. */
  dbPath: string;
  /** Default: any free port. */
  port?: number;
  /** Where answers are kept to be resumed (`useChat({ resume: true })`); none without it. */
  streams?: StreamOptions;
  /** The offline model's pause between the parts it writes. */
  wordDelayMs?: number;
}

/** Serve the page and the chat's API, with the chats in the SQLite file `dbPath`. */
export async function startServer(options: ServerOptions): Promise<ChatServer> {
  const chats = await CkptChatStore.open(`sqlite:${options.dbPath}`);
  const streams = options.streams && openStreams(options.streams);
  const routes = chatRoutes(chats, {
    model: chatModel({ wordDelayMs: options.wordDelayMs }),
    streams: streams?.context,
  });

  const handle = async (req: Request, gone: AbortSignal): Promise<Response> => {
    const { pathname } = new URL(req.url);
    const chat = /^\/api\/chat\/([^/]+)(\/tree|\/switch|\/stream|\/watch)?$/.exec(pathname);
    try {
      if (pathname === '/api/chat' && req.method === 'POST') return await routes.chat(req);
      if (chat) {
        const id = decodeURIComponent(chat[1]!);
        if (chat[2] === '/stream') return await routes.resume(id);
        if (chat[2] === '/watch') return routes.watch(id, gone);
        if (chat[2] === '/tree') return await routes.tree(id);
        if (chat[2] === '/switch' && req.method === 'POST')
          return await routes.switchBranch(id, req);
        return await routes.messages(id);
      }
    } catch (err) {
      return errorResponse(err);
    }
    return page(pathname);
  };

  const server = createServer((req, res) => {
    // Aborted when the page goes away: what a route follows for it stops.
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    handle(toRequest(req), gone.signal).then(
      (response) => send(response, res),
      (err) => send(errorResponse(err), res),
    );
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    chats,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await streams?.close();
      await chats.close();
    },
  };
}

/** A file of the built page; the page itself for every other path. */
async function page(pathname: string): Promise<Response> {
  const file = normalize(join(PAGE_DIR, pathname === '/' ? 'index.html' : pathname));
  const inside = file.startsWith(PAGE_DIR) ? file : join(PAGE_DIR, 'index.html');
  try {
    const body = await readFile(inside);
    return new Response(body, {
      headers: { 'content-type': TYPES[extname(inside)] ?? 'application/octet-stream' },
    });
  } catch {
    const index = await readFile(join(PAGE_DIR, 'index.html')).catch(() => null);
    if (index === null) return new Response('Build the page first: pnpm build', { status: 503 });
    return new Response(index, { headers: { 'content-type': TYPES['.html']! } });
  }
}

function toRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url}`, {
    method: req.method,
    headers,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: 'half' } : {}),
  } as RequestInit);
}

function send(response: Response, res: ServerResponse): void {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body === null) {
    res.end();
    return;
  }
  Readable.fromWeb(response.body as never).pipe(res);
}
