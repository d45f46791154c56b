/**
 * A TCP proxy on loopback that cuts a connection after a chosen number of bytes in either
 * direction: the fault-injection helper of the server backends' tests. Point a driver at
 * `proxy.port`, arm a cut, make a call, and the connection carrying it breaks at that byte,
 * including after the server has committed but before its reply arrives.
 */
import { createServer, type Socket, connect as tcpConnect } from 'node:net';

/** Which way the bytes flow. */
export type Direction = 'toServer' | 'toClient';

/** A running proxy. */
export interface FaultProxy {
  /** The loopback port to connect to instead of the server's. */
  readonly port: number;
  /** Bytes that flowed each way since the last `resetCounts()`. */
  readonly counts: Record<Direction, number>;
  resetCounts(): void;
  /** Cut the connection that carries byte number `bytes + 1` flowing `direction` from now on (once). */
  cutAfter(bytes: number, direction: Direction): void;
  /** Drop an armed cut that has not happened. */
  disarm(): void;
  /** Whether the armed cut has happened. */
  readonly fired: boolean;
  /** Break every open connection now. */
  cutAll(): void;
  close(): Promise<void>;
}

/** Start a proxy on 127.0.0.1 (a free port) in front of `target`. */
export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const open = new Set<Socket>();
  const counts: Record<Direction, number> = { toServer: 0, toClient: 0 };
  let plan: { direction: Direction; left: number } | null = null;
  let fired = false;

  const server = createServer((client) => {
    const upstream = tcpConnect(target.port, target.host);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    const relay = (from: Socket, to: Socket, direction: Direction) => {
      from.on('data', (chunk: Buffer) => {
        counts[direction] += chunk.length;
        if (plan?.direction === direction && chunk.length > plan.left) {
          // Deliver the bytes before the cut, then break both sides at once.
          if (plan.left > 0) to.write(chunk.subarray(0, plan.left));
          plan = null;
          fired = true;
          setImmediate(() => {
            client.destroy();
            upstream.destroy();
          });
          return;
        }
        if (plan?.direction === direction) plan.left -= chunk.length;
        to.write(chunk);
      });
      from.on('end', () => to.end());
    };
    relay(client, upstream, 'toServer');
    relay(upstream, client, 'toClient');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    port,
    counts,
    resetCounts() {
      counts.toServer = 0;
      counts.toClient = 0;
    },
    cutAfter(bytes, direction) {
      plan = { direction, left: bytes };
      fired = false;
    },
    disarm() {
      plan = null;
    },
    get fired() {
      return fired;
    },
    cutAll() {
      for (const socket of open) socket.destroy();
    },
    close() {
      plan = null;
      for (const socket of open) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
