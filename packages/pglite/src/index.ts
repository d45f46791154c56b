/**
 * The PostgreSQL backend on PGlite: PostgreSQL compiled to WebAssembly, in this process, with
 * no server. For tests and local development; one process at a time on a directory.
 *
 * @packageDocumentation
 * @module @ckpt/pglite
 */
import { existsSync } from 'node:fs';
import { CkptError } from '@ckpt/core';
import { checkOptions, invalidArgument } from '@ckpt/core/adapter';
import { type PostgresBackend, postgres } from '@ckpt/postgres';
import { PGlite } from '@electric-sql/pglite';
import { pgliteAsPool } from './pool.js';

/** Options of `pglite()`. */
export interface PgliteOptions {
  /** The directory PGlite keeps its database in; absent: in memory, gone when closed. */
  path?: string;
  /** A PGlite of your own, left open on close; instead of `path`. */
  db?: PGlite;
  /** The schema that holds every table and function; default `ckpt`. */
  namespace?: string;
  /** As `postgres()`'s: false opens only a store already there. Default true. */
  create?: boolean;
}

/** The PostgreSQL backend on PGlite, in the directory `path` (or in memory) or on your `db`. */
export function pglite(options: PgliteOptions = {}): PostgresBackend {
  const {
    path,
    db: given,
    ...rest
  } = checkOptions(options, 'options', ['path', 'db', 'namespace', 'create'], 'pglite()');
  if (path !== undefined && given !== undefined) {
    throw invalidArgument('options', 'pglite() takes `path` or `db`, not both.');
  }
  if (path !== undefined && (typeof path !== 'string' || path === '')) {
    throw invalidArgument('path', 'pglite() needs `path` as the directory of the database.');
  }
  if (rest.create === false && path !== undefined && !existsSync(path)) {
    // PGlite would make a database there: a misspelt path must change nothing.
    throw new CkptError(
      'NOT_FOUND',
      `pglite: no database at ${JSON.stringify(path)}; check the path, or open it with create: true to make one.`,
    );
  }
  const db = given ?? new PGlite(path);
  // One connection in this process, with no server to open another on: watchers poll.
  const backend = postgres({
    pool: pgliteAsPool(db),
    ...rest,
    preparedStatements: false,
    listen: false,
  });
  if (given === undefined) {
    // The database is this backend's own: it closes with it.
    const close = backend.close.bind(backend);
    backend.close = async () => {
      await close();
      if (!db.closed) await db.close();
    };
  }
  return backend;
}
