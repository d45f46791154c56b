/**
 * Live updates, as server-sent events. What a page watches (the catalog, of the sessions whose
 * id starts with the searched prefix and that have the tags filtered by, when there are; or
 * one session) is read as the one thing that moves when anything does: the catalog's first
 * session, or the session's summary (head, checkpoint count, last update). When it is read depends on the store: one that can
 * watch its changes (`capabilities.watch`) is read each time it says the thing changed (see
 * live-watch.ts), and one that cannot, every `pollMs` (see live-poll.ts).
 * One read serves every page that watches the same thing, a burst of changes makes one read,
 * and nothing is read (or watched) while no page watches.
 */
import type { ServerResponse } from 'node:http';
import type { CheckpointStore, SessionInfo } from '@ckpt/core';
import { errorResponse } from './errors.js';
import { poll } from './live-poll.js';
import { follow } from './live-watch.js';

/**
 * What a page watches: the catalog (its sessions whose id starts with `prefix` and that have
 * every tag of `where`, keys ascending so that one filter is one target), or one session.
 */
export type LiveTarget =
  | { kind: 'catalog'; prefix: string; where: Record<string, string> }
  | { kind: 'session'; sessionId: string };

/** Read the watched thing, and send it to its pages when it changed; never rejects. */
export type Refresh = () => Promise<void>;

/** What makes a watched thing be read, from the first page watching it until `signal` aborts. */
type Follower = (refresh: Refresh, signal: AbortSignal) => Promise<void>;

/** What a read of a watched thing makes: the event to send, and what tells whether it changed. */
interface Message {
  event: string;
  data: unknown;
  fingerprint: string;
}

type Reader = () => Promise<Message>;

/** How often a store that cannot watch is read. */
export const POLL_MS = 1000;
/** How long a stream may go without a word: a comment then, so that a connection that died is noticed. */
const KEEPALIVE_MS = 15_000;

/** One thing being watched, with the pages that watch it. */
class Channel {
  readonly streams = new Set<ServerResponse>();
  #last: string | null = null;
  /** The last event sent, for a page that starts watching later. */
  #lastEvent: string | null = null;
  #stop: AbortController | null = null;
  #keepalive: NodeJS.Timeout | null = null;
  /** The read in flight or the one queued after it, which every refresh until it starts joins. */
  #reading: Promise<void> = Promise.resolve();
  #queued = false;

  constructor(
    readonly read: Reader,
    readonly say: (err: unknown) => string,
    readonly follower: Follower,
  ) {}

  /** Start following (if not already) and send the current state to `stream`. */
  add(stream: ServerResponse): void {
    this.streams.add(stream);
    if (this.#stop === null) {
      this.#stop = new AbortController();
      this.#keepAlive();
      void this.follower(() => this.refresh(), this.#stop.signal);
    } else if (this.#lastEvent !== null) stream.write(this.#lastEvent);
  }

  /** Stop following when nobody watches any more. */
  remove(stream: ServerResponse): boolean {
    this.streams.delete(stream);
    if (this.streams.size > 0) return false;
    this.stop();
    return true;
  }

  stop(): void {
    this.#stop?.abort();
    this.#stop = null;
    if (this.#keepalive !== null) clearTimeout(this.#keepalive);
    this.#keepalive = null;
  }

  /**
   * Read soon, after the read in flight: the changes told meanwhile (a burst, or the events of
   * one page of the change log) wait for one read, which starts after them and so sees them all.
   */
  refresh(): Promise<void> {
    if (this.#queued) return this.#reading;
    this.#queued = true;
    this.#reading = this.#reading.then(async () => {
      await new Promise((resolve) => setImmediate(resolve));
      this.#queued = false;
      await this.#readAndSend();
    });
    return this.#reading;
  }

  async #readAndSend(): Promise<void> {
    let message: Message;
    try {
      message = await this.read();
    } catch (err) {
      const { body } = errorResponse(err, this.say);
      message = { event: 'failure', data: body, fingerprint: `failure ${body.error.message}` };
    }
    if (message.fingerprint === this.#last) return;
    this.#last = message.fingerprint;
    this.#lastEvent = `event: ${message.event}\ndata: ${JSON.stringify(message.data)}\n\n`;
    this.#send(this.#lastEvent);
  }

  #send(text: string): void {
    for (const stream of this.streams) stream.write(text);
    this.#keepAlive();
  }

  /** A comment after `KEEPALIVE_MS` without a word, while pages watch. */
  #keepAlive(): void {
    if (this.#keepalive !== null) clearTimeout(this.#keepalive);
    if (this.#stop === null) return;
    this.#keepalive = setTimeout(() => this.#send(': keepalive\n\n'), KEEPALIVE_MS);
    this.#keepalive.unref();
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
  readonly #channels = new Map<string, Channel>();

  /**
   * `say` words a failure's message (see `messenger`); `pollMs` is how often a store that
   * cannot watch is read.
   */
  constructor(store: CheckpointStore, say: (err: unknown) => string, pollMs = POLL_MS) {
    this.#store = store;
    this.#say = say;
    this.#pollMs = pollMs;
  }

  /**
   * Answer with an event stream for `target`: `catalog` events carry the catalog's first
   * session with the prefix and tags (or null), `session` events the session's summary (null
   * once it is deleted), `failure` events an error body; each is sent when it changes, and once
   * at the start.
   */
  serve(res: ServerResponse, target: LiveTarget): void {
    const key = JSON.stringify(target);
    let channel = this.#channels.get(key);
    if (channel === undefined) {
      channel = new Channel(this.#reader(target), this.#say, this.#follower(target));
      this.#channels.set(key, channel);
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    res.write('retry: 2000\n\n');
    const current = channel;
    current.add(res);
    res.on('close', () => {
      if (current.remove(res)) this.#channels.delete(key);
    });
  }

  /** End every stream, and stop watching and reading. */
  close(): void {
    for (const channel of this.#channels.values()) {
      channel.stop();
      for (const stream of channel.streams) stream.end();
    }
    this.#channels.clear();
  }

  /** Follow the store's changes where it can watch them; poll it where it cannot. */
  #follower(target: LiveTarget): Follower {
    const store = this.#store;
    const pollMs = this.#pollMs;
    if (!store.capabilities.watch) return (refresh, signal) => poll(refresh, pollMs, signal);
    return (refresh, signal) => follow({ store, target, refresh, pollMs, signal });
  }

  #reader(target: LiveTarget): Reader {
    const store = this.#store;
    if (target.kind === 'catalog') {
      return async () => {
        const { prefix, where } = target;
        const top = (await store.sessions({ limit: 1, prefix, where })).items[0] ?? null;
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
