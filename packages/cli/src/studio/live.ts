/**
 * Live updates, as server-sent events. The studio learns of a change by reading, about once a
 * second, the one thing that moves when anything does: the catalog's first session (for the
 * list of sessions; of those whose id starts with the searched prefix, when there is one) or
 * the watched session's summary (head, checkpoint count, last update).
 * One read serves every page that watches the same thing, and nothing is read while no page
 * watches, so that a studio left open costs the store one small read a second at most.
 */
import type { ServerResponse } from 'node:http';
import type { CheckpointStore, SessionInfo } from '@ckpt/core';
import { errorResponse } from './errors.js';

/** What a page watches: the catalog (its sessions whose id starts with `prefix`), or one session. */
export type LiveTarget =
  | { kind: 'catalog'; prefix: string }
  | { kind: 'session'; sessionId: string };

/** How often a watched thing is read. */
export const POLL_MS = 1000;
/** How often an idle stream gets a comment, so that a connection that died is noticed. */
const KEEPALIVE_MS = 15_000;

/** One thing being watched, with the pages that watch it. */
class Watch {
  readonly streams = new Set<ServerResponse>();
  #last: string | null = null;
  /** The last event sent, for a page that starts watching later. */
  #lastEvent: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #lastKeepalive = Date.now();

  constructor(
    readonly read: () => Promise<{ event: string; data: unknown; fingerprint: string }>,
    readonly say: (err: unknown) => string,
    readonly pollMs: number,
  ) {}

  /** Start reading (if not already) and send the current state to `stream`. */
  add(stream: ServerResponse): void {
    this.streams.add(stream);
    if (this.#timer === null) this.#tick(true);
    else if (this.#lastEvent !== null) stream.write(this.#lastEvent);
  }

  /** Stop reading when nobody watches any more. */
  remove(stream: ServerResponse): boolean {
    this.streams.delete(stream);
    if (this.streams.size > 0) return false;
    this.stop();
    return true;
  }

  stop(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #tick(now: boolean): void {
    this.#timer = setTimeout(
      async () => {
        await this.#poll();
        if (this.streams.size > 0) this.#tick(false);
      },
      now ? 0 : this.pollMs,
    );
    this.#timer.unref();
  }

  async #poll(): Promise<void> {
    let message: { event: string; data: unknown; fingerprint: string };
    try {
      message = await this.read();
    } catch (err) {
      const { body } = errorResponse(err, this.say);
      message = { event: 'failure', data: body, fingerprint: `failure ${body.error.message}` };
    }
    if (message.fingerprint !== this.#last) {
      this.#last = message.fingerprint;
      this.#lastEvent = `event: ${message.event}\ndata: ${JSON.stringify(message.data)}\n\n`;
      this.#send(this.#lastEvent);
    } else if (Date.now() - this.#lastKeepalive > KEEPALIVE_MS) {
      this.#send(': keepalive\n\n');
    }
  }

  #send(text: string): void {
    this.#lastKeepalive = Date.now();
    for (const stream of this.streams) stream.write(text);
  }
}

/** A fingerprint of a session's summary: what changes when it is written, rolled back or pruned. */
export const sessionPrint = (info: SessionInfo | null) =>
  info === null ? 'none' : `${info.head} ${info.checkpoints} ${info.updatedAt.getTime()}`;

/** The event streams of one studio. */
export class Live {
  readonly #store: CheckpointStore;
  readonly #say: (err: unknown) => string;
  readonly #pollMs: number;
  readonly #watches = new Map<string, Watch>();

  /** `say` words a failure's message (see `messenger`). */
  constructor(store: CheckpointStore, say: (err: unknown) => string, pollMs = POLL_MS) {
    this.#store = store;
    this.#say = say;
    this.#pollMs = pollMs;
  }

  /**
   * Answer with an event stream for `target`: `catalog` events carry the catalog's first
   * session with the prefix (or null), `session` events the session's summary (null once it is deleted),
   * `failure` events an error body; each is sent when it changes, and once at the start.
   */
  serve(res: ServerResponse, target: LiveTarget): void {
    const key = JSON.stringify(target);
    let watch = this.#watches.get(key);
    if (watch === undefined) {
      watch = new Watch(this.#reader(target), this.#say, this.#pollMs);
      this.#watches.set(key, watch);
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    res.write('retry: 2000\n\n');
    const current = watch;
    current.add(res);
    res.on('close', () => {
      if (current.remove(res)) this.#watches.delete(key);
    });
  }

  /** End every stream and stop reading. */
  close(): void {
    for (const watch of this.#watches.values()) {
      watch.stop();
      for (const stream of watch.streams) stream.end();
    }
    this.#watches.clear();
  }

  #reader(
    target: LiveTarget,
  ): () => Promise<{ event: string; data: unknown; fingerprint: string }> {
    const store = this.#store;
    if (target.kind === 'catalog') {
      return async () => {
        const top = (await store.sessions({ limit: 1, prefix: target.prefix })).items[0] ?? null;
        return {
          event: 'catalog',
          data: { top },
          fingerprint: top === null ? 'none' : `${top.sessionId} ${sessionPrint(top)}`,
        };
      };
    }
    return async () => {
      const info = await store.info(target.sessionId);
      return { event: 'session', data: info, fingerprint: sessionPrint(info) };
    };
  }
}
