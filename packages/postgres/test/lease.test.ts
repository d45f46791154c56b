/**
 * A connection the server ends just as the pool hands it to the store: the reply that frees it
 * and the server's FATAL arrive in one read, and pg reads both before an awaited
 * `pool.connect()` returns.
 */
import { createServer, type Socket, connect as tcpConnect } from 'node:net';
import { CheckpointStore } from '@ckpt/core';
import { postgres } from '@ckpt/postgres';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { adminPool, available, dropSchema, freshNamespace, url } from './support.js';

/**
 * A proxy to the server that can hold back what the server sends and deliver all of it at
 * once, in one write: what a client that reads late gets.
 */
async function holdingProxy(target: URL) {
  /** By client, what the server sent while held (null: not held), and whether it hung up. */
  const toClients = new Map<Socket, { held: Buffer[] | null; ended: boolean }>();
  const server = createServer((client) => {
    const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
    const state = { held: null as Buffer[] | null, ended: false };
    toClients.set(client, state);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => {
      toClients.delete(client);
      upstream.destroy();
    });
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => {
      if (state.held) state.held.push(chunk);
      else client.write(chunk);
    });
    upstream.on('end', () => {
      state.ended = true;
      if (!state.held) client.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    hold: () => {
      for (const state of toClients.values()) state.held = [];
    },
    /**
     * Resolves once the server has hung up on every held client: its last words (a FATAL)
     * are then among what is held, to go in the same write as the rest.
     */
    serverHungUp: async () => {
      const held = () => [...toClients.values()].filter((state) => state.held !== null);
      while (!held().every((state) => state.ended)) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    deliver: () => {
      for (const [client, state] of toClients) {
        if (state.held?.length) client.write(Buffer.concat(state.held));
        state.held = null;
        if (state.ended) client.end();
      }
    },
    close: async () => {
      for (const client of toClients.keys()) client.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe.skipIf(!available)('postgres leasing a connection the server has just ended', () => {
  it('neither crashes the process nor sends a batch to it, and leases another', async () => {
    const application = `ckpt-lease-${process.pid}`;
    const proxy = await holdingProxy(new URL(url));
    const viaProxy = new URL(url);
    viaProxy.port = String(proxy.port);
    viaProxy.searchParams.set('application_name', application);
    // One connection: while a call holds it, the next ones wait for it as a batch.
    const pool = new pg.Pool({ connectionString: viaProxy.toString(), max: 1 });
    pool.on('error', () => {});
    const namespace = freshNamespace();
    // listen: false: no notification connection beside the pool's one, which is under test.
    const store = new CheckpointStore(postgres({ pool, namespace, listen: false }));
    const uncaught: unknown[] = [];
    const record = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', record);
    try {
      await store.checkpoint('warm', 0);
      const backendOf = async (state: string) =>
        (
          await adminPool().query<{ pid: number }>(
            'SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND state = $2',
            [application, state],
          )
        ).rows[0]?.pid;
      const session = await backendOf('idle');
      expect(session).toBeDefined();

      const { rows } = await adminPool().query('SELECT clock_timestamp() AS now');
      proxy.hold();
      const alone = store.checkpoint('alone', 1);
      // The server has answered the call alone (the answer is held back).
      const answered = async () =>
        (
          await adminPool().query(
            "SELECT FROM pg_stat_activity WHERE pid = $1 AND state = 'idle' AND state_change > $2",
            [session, rows[0].now],
          )
        ).rowCount === 1;
      while (!(await answered())) {}
      // Two more checkpoints wait for the connection, to go together on it.
      const batch = [store.checkpoint('a', 1), store.checkpoint('b', 1)];
      while (pool.waitingCount === 0) await new Promise((resolve) => setImmediate(resolve));
      // The server ends the session (its FATAL held back too).
      await adminPool().query('SELECT pg_terminate_backend($1)', [session]);
      while ((await backendOf('idle')) === session) {}
      // Gone from pg_stat_activity, the session may still be sending its FATAL: wait for it.
      await proxy.serverHungUp();
      // The answer frees the connection, and the pool hands it to the batch; then the FATAL.
      proxy.deliver();

      const settled = await Promise.allSettled([alone, ...batch]);
      expect(uncaught.map(String)).toEqual([]);
      const outcomes = settled.map((s) =>
        s.status === 'fulfilled' ? s.value.seq : String(s.reason),
      );
      expect(outcomes[0]).toBe(1);
      // The two that waited went together on a connection leased anew, or one of them, sent
      // alone on the connection before pg had read the FATAL behind its free signal, failed
      // with the server's words and the hint to retry: never on a connection known broken.
      for (const outcome of outcomes.slice(1)) {
        if (outcome !== 1) {
          expect(outcome).toMatch(/terminating connection.*may or may not have run/);
          expect(outcome).not.toMatch(/not queryable/);
        }
      }
      expect(outcomes.slice(1)).toContain(1);
    } finally {
      process.off('uncaughtException', record);
      await store.close();
      await pool.end();
      await proxy.close();
      await dropSchema(namespace);
    }
  });
});
