import { once } from 'node:events';
import { expectCkptError } from '@ckpt/contract-tests';
import { CheckpointStore } from '@ckpt/core';
import { SERVER_HINTS } from '@ckpt/core/adapter';
import { mysql } from '@ckpt/mysql';
import mysql2 from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { mysqlErrorHint, mysqlHints } from '../src/error-hints.js';
import {
  adminPool,
  available,
  connectionIds,
  dropNamespace,
  freshNamespace,
  killAll,
  url,
} from './support.js';

const failure = (code: string) => Object.assign(new Error(`refused (${code})`), { code });

describe('mysqlErrorHint', () => {
  it.each([
    {
      codes: ['ER_ACCESS_DENIED_ERROR', 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR'],
      hint: SERVER_HINTS.loginRefused,
    },
    { codes: ['ER_BAD_DB_ERROR'], hint: SERVER_HINTS.missingDatabase },
    {
      codes: [
        'ER_DBACCESS_DENIED_ERROR',
        'ER_TABLEACCESS_DENIED_ERROR',
        'ER_PROCACCESS_DENIED_ERROR',
        'ER_SPECIFIC_ACCESS_DENIED_ERROR',
      ],
      hint: SERVER_HINTS.missingPrivilege,
    },
    {
      codes: ['PROTOCOL_CONNECTION_LOST', 'ER_SERVER_SHUTDOWN'],
      hint: SERVER_HINTS.connectionLost,
    },
  ])('says what to do about $codes.0 and its kind', ({ codes, hint }) => {
    for (const code of codes) expect(mysqlErrorHint(failure(code))).toBe(hint);
  });

  it('says nothing of a code it has no remedy for', () => {
    expect(mysqlErrorHint(failure('ER_DUP_ENTRY'))).toBeUndefined();
  });
});

describe.skipIf(!available)('mysql connections lost on the real server', () => {
  it('says a call whose connection the server killed may or may not have run', async () => {
    const backend = mysql({ url, namespace: freshNamespace() });
    const ids = connectionIds(backend);
    const store = new CheckpointStore(backend);
    await store.checkpoint('s', 0);
    // The next checkpoint waits for the table, until the server kills its connection.
    const locker = await mysql2.createConnection({ uri: url });
    try {
      await locker.query(`LOCK TABLES ${backend.namespace}_sessions WRITE`);
      const failed = expectCkptError(store.checkpoint('s', 1), 'BACKEND');
      const waiting = async () => {
        const [rows] = (await adminPool().query(
          `SELECT ID FROM information_schema.PROCESSLIST WHERE ID IN (${[...ids].join(', ')}) AND STATE LIKE 'Waiting for table%'`,
        )) as unknown as [unknown[]];
        return rows.length > 0;
      };
      while (!(await waiting())) {}
      await killAll(ids);
      const err = await failed;
      expect(err.message).toMatch(/Connection lost: The server closed the connection;/);
      expect(err.message).toContain(SERVER_HINTS.connectionLost);
    } finally {
      await locker.end();
      await store.close();
      await dropNamespace(backend.namespace);
    }
  });

  it('says the same of a statement sent on a connection the server had killed', async () => {
    const pool = mysql2.createPool({ uri: url, connectionLimit: 1 });
    const conn = await pool.getConnection();
    const closed = once(conn.connection, 'error');
    await adminPool().query(`KILL CONNECTION ${conn.threadId}`);
    await closed;
    const err = await conn.query('SELECT 1').catch((e: Error) => e);
    expect(String(err)).toContain("Can't add new command when connection is in closed state");
    expect(mysqlHints('127.0.0.1:3306')(err)).toBe(SERVER_HINTS.connectionLost);
    conn.release();
    await pool.end();
  });
});
