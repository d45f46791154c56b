/** A studio's event stream (`/api/events…`) as a page reads it: each event as it comes. */
import { type IncomingMessage, request } from 'node:http';

/** One server-sent event: its name and its data, parsed. */
export interface LiveEvent {
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: the tests look into whichever event came.
  data: any;
}

/** An open event stream. */
export interface EventStream {
  /** Every event received so far. */
  readonly events: LiveEvent[];
  /** The comments received so far (keepalives), each without its colon. */
  readonly comments: string[];
  /**
   * The first event not taken yet that `wanted` accepts (any, without it), once it comes;
   * rejects after `ms` without one.
   */
  next(wanted?: (event: LiveEvent) => boolean, ms?: number): Promise<LiveEvent>;
  /** Hang up, as a page that leaves does. */
  close(): Promise<void>;
}

/** Open `path` on the studio at `origin`, with its token as a script sends it. */
export async function openEvents(
  origin: string,
  token: string,
  path: string,
): Promise<EventStream> {
  const url = new URL(path, origin);
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        headers: { authorization: `Bearer ${token}` },
      },
      resolve,
    )
      .on('error', reject)
      .end();
  });
  if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}`);
  const events: LiveEvent[] = [];
  const comments: string[] = [];
  let taken = 0;
  let buffered = '';
  const arrived = new Set<() => void>();
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buffered += chunk;
    const blocks = buffered.split('\n\n');
    buffered = blocks.pop()!;
    for (const block of blocks) {
      const lines = block.split('\n');
      for (const line of lines) if (line.startsWith(':')) comments.push(line.slice(1).trim());
      const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length);
      const data = lines.find((line) => line.startsWith('data: '))?.slice('data: '.length);
      // The retry line carries no event, nor does a comment.
      if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) });
    }
    for (const wake of arrived) wake();
  });
  const closed = new Promise<void>((resolve) => res.once('close', resolve));

  return {
    events,
    comments,
    next(wanted = () => true, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const look = () => {
          const at = events.findIndex((event, i) => i >= taken && wanted(event));
          if (at === -1) return false;
          taken = at + 1;
          arrived.delete(look);
          clearTimeout(timer);
          resolve(events[at]!);
          return true;
        };
        const timer = setTimeout(() => {
          arrived.delete(look);
          reject(new Error(`no such event on ${path} in ${ms} ms; got ${JSON.stringify(events)}`));
        }, ms);
        if (!look()) arrived.add(look);
      });
    },
    async close() {
      res.destroy();
      await closed;
    },
  };
}
