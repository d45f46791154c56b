/**
 * For server adapters: a store pointed at something that accepts connections and never
 * answers (another kind of server waiting for its own client, or a wrong port) fails in time,
 * and says where nothing answered and what to check, instead of waiting forever.
 */
import { createServer, type Socket } from 'node:net';
import type { CheckpointStore } from '@ckpt/core';
import { expect } from 'vitest';
import { expectCkptError } from './util.js';

/**
 * Open a store on a listener at 127.0.0.1 that accepts and never answers, given its
 * `host:port`, with a short connect timeout in the URL; check that a read and a write fail
 * with BACKEND naming that address and `protocol` (`'PostgreSQL'`), then close it all.
 */
export async function expectSilentServerNamed(
  protocol: string,
  open: (address: string) => CheckpointStore,
): Promise<void> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const address = `127.0.0.1:${port}`;
  const store = open(address);
  try {
    for (const call of [() => store.load('s'), () => store.checkpoint('s', 1)]) {
      const { message } = await expectCkptError(call, 'BACKEND');
      expect(message).toContain(`nothing at ${address} answered as ${protocol} in time`);
      expect(message).toContain('check the port in the URL');
    }
  } finally {
    await store.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
}
