/**
 * The options of a SQLite store, and opening its database file the way every ckpt SQLite store
 * needs it: created mode 0600, WAL, the chosen `synchronous` level, a busy timeout, and its
 * schema migrated under a write lock (migrate.ts); or, with `create: false`, only a file that
 * holds the namespace already, changing nothing.
 */
import { closeSync, constants, existsSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { CkptError, isCkptError } from '@ckpt/core';
import {
  checkCreate,
  checkNamespace,
  checkOptions,
  errorCode,
  invalidArgument,
  type StoreLocation,
  storeNotFound,
} from '@ckpt/core/adapter';
import Database from 'better-sqlite3';
import { migrateFile } from './migrate.js';
import { tables } from './schema.js';

/** How long a writer waits for another process's transaction before failing. */
export const BUSY_TIMEOUT_MS = 10_000;
// Page cache per connection, in KiB (SQLite's default is 2 MiB): enough to keep the
// interior pages of a large catalog in memory, so that lookups stay flat as it grows.
const CACHE_KIB = 16 * 1024;

/** `synchronous` levels: FULL (default) makes every commit durable before it returns. */
export type Synchronous = 'full' | 'extra' | 'normal' | 'off';
const LEVELS: Synchronous[] = ['full', 'extra', 'normal', 'off'];

/** Options shared by `sqlite()` and `sqliteKv()`. */
export interface SqliteOptions {
  /** A file path, or `':memory:'`. */
  path: string;
  /** Table name prefix; default `ckpt`. */
  namespace?: string;
  /** PRAGMA synchronous; default `'full'`. */
  synchronous?: Synchronous;
  /**
   * Whether the backend commits the mutations that wait at the same moment together, one
   * transaction (and fsync) for all, each call in a savepoint; default true. The KV store's
   * writes are single statements and always commit alone.
   */
  groupCommit?: boolean;
  /**
   * Create the file and the namespace's tables where they are not there (default true). False
   * opens only a file that holds the namespace at this package's schema version, and writes
   * nothing to open it: a missing one is NOT_FOUND, an older one SCHEMA. `':memory:'` is a
   * new, empty database either way, as `memory()` is.
   */
  create?: boolean;
  /**
   * Whether the backend's writes run on a thread of their own that owns the write connection,
   * so that the event loop never waits for a commit or its fsync; default true for a file,
   * and always false for `':memory:'` (a database another connection cannot see). Reads stay
   * on the event loop's connection. The KV store's writes always run on the event loop.
   */
  worker?: boolean;
}

/** A database opened and migrated for one namespace. */
export interface OpenedDatabase {
  db: Database.Database;
  namespace: string;
  synchronous: Synchronous;
  /** Whether the file was made by this opening (a new file, not `':memory:'`). */
  created: boolean;
}

/** Open `options.path` and apply `migrations` (entry i: version i to i + 1) under `versionKey`. */
export function openDatabase(
  options: SqliteOptions,
  versionKey: string,
  migrations: (ns: string) => string[],
): OpenedDatabase {
  if (
    typeof options !== 'object' ||
    options === null ||
    typeof options.path !== 'string' ||
    options.path === ''
  ) {
    throw invalidArgument(
      'path',
      "sqlite() needs { path }: a file such as './agent.db', or ':memory:'.",
    );
  }
  checkOptions(
    options,
    'options',
    ['path', 'namespace', 'synchronous', 'groupCommit', 'create', 'worker'],
    'sqlite()',
  );
  for (const flag of ['groupCommit', 'worker'] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== 'boolean') {
      throw invalidArgument(
        flag,
        `${flag} must be true or false, got ${JSON.stringify(options[flag])}.`,
      );
    }
  }
  const namespace = checkTablePrefix(checkNamespace(options.namespace));
  const synchronous = checkSynchronous(options.synchronous);
  const inMemory = options.path === ':memory:';
  const existing = inMemory || checkCreate(options.create, 'sqlite') ? undefined : options.path;
  const location: StoreLocation = {
    where: `namespace '${namespace}'`,
    at: JSON.stringify(options.path),
    check: 'the path and the namespace',
  };
  if (existing !== undefined && !existsSync(existing)) {
    throw storeNotFound(location, 'the file does not exist');
  }
  let db: Database.Database | undefined;
  let created = false;
  try {
    // Create the file ourselves so that it starts private; SQLite gives its -wal and -shm
    // files the database file's permissions.
    if (!inMemory && existing === undefined) {
      created = !existsSync(options.path);
      closeSync(openSync(options.path, constants.O_CREAT | constants.O_RDWR, 0o600));
    }
    const opened = new Database(options.path, {
      timeout: BUSY_TIMEOUT_MS,
      fileMustExist: existing !== undefined,
    });
    db = opened;
    const migrateNamespace = () =>
      whileBusy(() =>
        migrateFile(
          opened,
          namespace,
          versionKey,
          migrations(namespace),
          existing === undefined ? undefined : { ...location, check: checkNamespaces(opened) },
        ),
      );
    // A file that must hold the namespace already is checked before anything is set on it.
    if (existing !== undefined) migrateNamespace();
    if (!inMemory) whileBusy(() => opened.pragma('journal_mode = WAL'));
    configure(opened, synchronous);
    if (existing === undefined) migrateNamespace();
    return { db: opened, namespace, synchronous, created };
  } catch (err) {
    db?.close();
    throw openError(err, options.path);
  }
}

/** The settings of every connection a store opens; the journal mode is the file's own. */
function configure(db: Database.Database, synchronous: Synchronous): void {
  db.pragma(`synchronous = ${synchronous.toUpperCase()}`);
  db.pragma(`cache_size = -${CACHE_KIB}`);
}

/**
 * Make `db` overwrite with zeros what it deletes, on its pages and the pages it frees, so that
 * a value deleted or replaced leaves nothing readable in the file: set on every connection of
 * a store whose values are encrypted, where a plain value it replaces must not linger.
 */
export function overwriteDeleted(db: Database.Database): void {
  db.pragma('secure_delete = ON');
}

/**
 * Another connection to a file `openDatabase` opened and migrated (in WAL already), with the
 * same settings: the writer thread's.
 */
export function openWriter(
  path: string,
  synchronous: Synchronous,
  secureDelete: boolean,
): Database.Database {
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS, fileMustExist: true });
  try {
    configure(db, synchronous);
    if (secureDelete) overwriteDeleted(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * What to check when a file lacks the namespace asked for, with the namespaces it holds (read
 * from the names of their meta tables), so that a misspelt one shows next to the right one.
 */
function checkNamespaces(db: Database.Database): string {
  const meta = tables('').meta; // `_meta`, after a namespace
  const held = (
    db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table'`).all() as {
      name: string;
    }[]
  )
    .map((row) => row.name)
    .filter((name) => name.endsWith(meta))
    .map((name) => `'${name.slice(0, -meta.length)}'`)
    .sort();
  const holds =
    held.length === 0
      ? 'no ckpt namespace'
      : `the ${held.length === 1 ? 'namespace' : 'namespaces'} ${held.join(', ')}`;
  return `the path and the namespace (the file holds ${holds})`;
}

// Tables are named `<namespace>_<table>`, and SQLite keeps every name that starts with
// `sqlite_` for itself.
function checkTablePrefix(namespace: string): string {
  if (`${namespace}_`.startsWith('sqlite_')) {
    throw invalidArgument(
      'namespace',
      `namespace ${JSON.stringify(namespace)} would name tables sqlite_…, which SQLite keeps for itself; pick another, such as the default 'ckpt'.`,
    );
  }
  return namespace;
}

function checkSynchronous(value: unknown = 'full'): Synchronous {
  const level = typeof value === 'string' ? value.toLowerCase() : '';
  if (!LEVELS.includes(level as Synchronous)) {
    throw invalidArgument(
      'synchronous',
      `synchronous must be one of ${LEVELS.map((l) => `'${l}'`).join(', ')}; got ${JSON.stringify(value) ?? String(value)}.`,
    );
  }
  return level as Synchronous;
}

// A path that cannot name a database file is the caller's to fix (INVALID_ARGUMENT); any
// other failure to open one is the system's (BACKEND, with the cause).
const WRONG_PATH: Record<string, string> = {
  ENOENT: 'its directory does not exist; create the directory first',
  ENOTDIR: 'a part of it is not a directory',
  EISDIR: 'it is a directory; name a file in it',
  SQLITE_NOTADB: 'the file is not a SQLite database; name a new file or a ckpt database',
};

// better-sqlite3's words when its compiled part is missing (through the bindings package), or
// was built for another Node.js (Node's own words, as it loads an addon).
const NO_BINDING = /^Could not locate the bindings file|NODE_MODULE_VERSION/;

function openError(err: unknown, path: string): unknown {
  if (isCkptError(err)) return err;
  const code = errorCode(err);
  const reason = err instanceof Error ? err.message : String(err);
  if (NO_BINDING.test(reason)) {
    return new CkptError(
      'UNSUPPORTED',
      `sqlite() cannot load the compiled part of better-sqlite3 (${reason.split('\n')[0]}): it was installed without it, or for another Node.js. Run 'npm rebuild better-sqlite3' in your application's directory with the Node.js that runs it; where no prebuilt binary exists for the platform, that compiles it, and needs Python, make and a C++ compiler.`,
      { cause: err, details: { package: 'better-sqlite3' } },
    );
  }
  const where = `sqlite() cannot open ${JSON.stringify(path)}`;
  // A directory that exists but takes no new files (such as /proc) gives ENOENT as well; the
  // path is not wrong then, the system refuses it.
  const refused = code === 'ENOENT' && existsSync(dirname(path));
  if (WRONG_PATH[code] && !refused)
    return invalidArgument('path', `${where}: ${WRONG_PATH[code]}.`);
  return new CkptError('BACKEND', `${where}: ${reason}`, { cause: err });
}

/**
 * Run `fn` again while SQLite reports the file busy, up to the busy timeout. Switching a new
 * file to WAL fails at once, without waiting, when other processes open it at the same
 * moment; opening is synchronous, so the wait between tries blocks too.
 */
export function whileBusy<T>(fn: () => T): T {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      return fn();
    } catch (err) {
      const busy = errorCode(err).startsWith('SQLITE_BUSY');
      if (!busy || Date.now() > deadline) throw err;
      Atomics.wait(pause, 0, 0, 2 + Math.random() * 8);
    }
  }
}
