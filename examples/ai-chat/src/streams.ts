/**
 * Where answers stream from, so that a reloaded page picks an answer up where it is: the
 * `resumable-stream` package on Redis (its ioredis entry, the client ckpt's Redis adapter uses
 * too). The process that runs the model publishes the answer; any server process on the same
 * Redis can replay it to a page that asks for it again.
 */
import { Redis } from 'ioredis';
import {
  createResumableStreamContext,
  type ResumableStreamContext,
} from 'resumable-stream/ioredis';

/** Where the streams are kept: the Redis server, and a prefix for their keys and channels. */
export interface StreamOptions {
  redisUrl: string;
  /** Default `resumable-stream`, the package's own. */
  keyPrefix?: string;
}

/** The resumable-stream context, and how to close its two Redis connections. */
export interface ResumableStreams {
  context: ResumableStreamContext;
  close(): Promise<void>;
}

/** Connect to Redis: a publisher, and a subscriber (a connection that subscribes does nothing else). */
export function openStreams(options: StreamOptions): ResumableStreams {
  const publisher = new Redis(options.redisUrl);
  const subscriber = new Redis(options.redisUrl);
  const context = createResumableStreamContext({
    // A long-lived Node.js server: nothing has to be kept alive for a stream to finish.
    waitUntil: null,
    publisher,
    subscriber,
    ...(options.keyPrefix === undefined ? {} : { keyPrefix: options.keyPrefix }),
  });
  return {
    context,
    close: async () => {
      await Promise.all([publisher.quit(), subscriber.quit()]);
    },
  };
}
