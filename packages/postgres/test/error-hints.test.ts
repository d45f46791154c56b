import { expectCkptError } from '@ckpt/contract-tests';
import { startFaultProxy } from '@ckpt/contract-tests/servers';
import { CheckpointStore } from '@ckpt/core';
import { SERVER_HINTS } from '@ckpt/core/adapter';
import { postgres } from '@ckpt/postgres';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresErrorHint, postgresHints } from '../src/error-hints.js';
import { adminPool, available, dropAndClose, freshNamespace, url } from './support.js';

const failure = (code: string) => Object.assign(new Error(`refused (${code})`), { code });

describe('postgresErrorHint', () => {
  it.each([
    { codes: ['28P01', '28000'], hint: SERVER_HINTS.loginRefused },
    { codes: ['3D000'], hint: SERVER_HINTS.missingDatabase },
    { codes: ['42501'], hint: SERVER_HINTS.missingPrivilege },
    { codes: ['57P01', '57P02', '57P05'], hint: SERVER_HINTS.connectionLost },
    { codes: ['57P03'], hint: SERVER_HINTS.serverNotReady },
  ])('says what to do about SQLSTATE $codes.0 and its kind', ({ codes, hint }) => {
    for (const code of codes) expect(postgresErrorHint(failure(code))).toBe(hint);
  });

  it('says nothing of a SQLSTATE it has no remedy for', () => {
    expect(postgresErrorHint(failure('23505'))).toBeUndefined();
  });

  it("says a call may or may not have run in each of pg's words for a lost connection", () => {
    const hint = postgresHints('127.0.0.1:5432');
    for (const message of [
      'Connection terminated unexpectedly',
      'Connection terminated',
      'Client has encountered a connection error and is not queryable',
    ]) {
      expect(hint(new Error(message))).toBe(SERVER_HINTS.connectionLost);
    }
  });
});

describe.skipIf(!available)('postgres connections lost on the real server', () => {
  /**
   * A store whose next checkpoint waits on a lock until `drop` (given the pid of the store's
   * waiting session) ends its connection; the message the call fails with.
   */
  const droppedMidCall = async (
    storeUrl: string,
    application: string,
    drop: (pid: number) => Promise<void>,
  ) => {
    const backend = postgres({ url: storeUrl, namespace: freshNamespace() });
    const store = new CheckpointStore(backend);
    await store.checkpoint('s', 0);
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${backend.namespace}.sessions IN ACCESS EXCLUSIVE MODE`);
      const failed = expectCkptError(store.checkpoint('s', 1), 'BACKEND');
      let waiting: { pid: number }[] = [];
      while (waiting.length === 0) {
        ({ rows: waiting } = await adminPool().query(
          "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
          [application],
        ));
      }
      await drop(waiting[0]!.pid);
      return await failed;
    } finally {
      await locker.end();
      await dropAndClose(backend);
    }
  };

  it('says a call whose session the server terminated may or may not have run', async () => {
    const application = `ckpt-hints-${process.pid}`;
    const err = await droppedMidCall(
      `${url}?application_name=${application}`,
      application,
      async (pid) => {
        await adminPool().query('SELECT pg_terminate_backend($1)', [pid]);
      },
    );
    expect(err.message).toMatch(/terminating connection due to administrator command/);
    expect(err.message).toContain(SERVER_HINTS.connectionLost);
  });

  it('says the same of a call whose connection closed under it', async () => {
    const server = new URL(url);
    const proxy = await startFaultProxy({
      host: server.hostname,
      port: Number(server.port || 5432),
    });
    const application = `ckpt-hints-cut-${process.pid}`;
    const viaProxy = new URL(url);
    viaProxy.port = String(proxy.port);
    viaProxy.searchParams.set('application_name', application);
    try {
      const err = await droppedMidCall(viaProxy.toString(), application, async () =>
        proxy.cutAll(),
      );
      expect(err.message).toMatch(/Connection terminated unexpectedly/);
      expect(err.message).toContain(SERVER_HINTS.connectionLost);
    } finally {
      await proxy.close();
    }
  });

  it('says the same of a statement sent on a connection the server had terminated', async () => {
    const client = new pg.Client({ connectionString: url });
    const broke = new Promise((resolve) => client.once('error', resolve));
    await client.connect();
    const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
    await adminPool().query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
    await broke;
    const err = await client.query('SELECT 1').catch((e: Error) => e);
    expect(String(err)).toContain('not queryable');
    expect(postgresHints('127.0.0.1:5432')(err)).toBe(SERVER_HINTS.connectionLost);
    await client.end();
  });
});
