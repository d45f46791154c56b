/**
 * PGlite seen as a `pg.Pool` of one connection: the driver seam of the PostgreSQL adapter,
 * which then runs on PGlite as it is. PGlite is one connection in this process, so a caller
 * that leases it for a transaction holds it alone until it releases it, and every other
 * statement waits its turn, as on a pool whose one connection is busy.
 */
import type { PGlite, Results } from '@electric-sql/pglite';
import pg from 'pg';

type TypeParsers = { getTypeParser: typeof pg.types.getTypeParser };

/** A statement as the PostgreSQL adapter gives it to pg. */
type Statement = string | { text: string; values?: unknown[]; types?: TypeParsers };

/** pg's result of PGlite's. */
function asPgResult(result: Results): pg.QueryResult {
  return {
    rows: result.rows as pg.QueryResult['rows'],
    rowCount: result.affectedRows ?? result.rows.length,
    fields: result.fields as pg.QueryResult['fields'],
    command: '',
    oid: 0,
  };
}

/**
 * PGlite's parsers, reading each column's text as pg would: with the statement's own type
 * parsers where it gives them, else pg's.
 */
function parsersAsPg({ getTypeParser }: TypeParsers) {
  const byType = new Proxy({} as Record<number, (value: string) => unknown>, {
    get: (_target, oid) => getTypeParser(Number(oid), 'text'),
  });
  return byType;
}

/** Whose turn it is on a PGlite: its one connection, shared by every pool on it. */
interface Turns {
  turn: Promise<void>;
  waiting: number;
  busy: boolean;
}

const turnsOf = new WeakMap<PGlite, Turns>();

/** Wait for `db`'s connection; resolves with the function that gives it back. */
async function take(db: PGlite): Promise<() => void> {
  let turns = turnsOf.get(db);
  if (turns === undefined) {
    turns = { turn: Promise.resolve(), waiting: 0, busy: false };
    turnsOf.set(db, turns);
  }
  const held = turns;
  let giveBack = () => {};
  const previous = held.turn;
  held.turn = new Promise<void>((resolve) => (giveBack = resolve));
  held.waiting++;
  await previous;
  held.waiting--;
  held.busy = true;
  return () => {
    held.busy = false;
    giveBack();
  };
}

/** `db` as a pool of one connection. Ending the pool leaves `db` open: its owner closes it. */
export function pgliteAsPool(db: PGlite): pg.Pool {
  let ended = false;
  /** Run a statement on the connection, held already. */
  const run = async (statement: Statement, values?: unknown[]) => {
    const given = typeof statement === 'string' ? { text: statement, values } : statement;
    const parsers = parsersAsPg(given.types ?? pg.types);
    if (given.values === undefined || given.values.length === 0) {
      // A simple query, which may hold several statements: pg answers with a result each.
      const results = (await db.exec(given.text, { parsers })).map(asPgResult);
      return results.length === 1 ? results[0] : results;
    }
    return asPgResult(await db.query(given.text, given.values, { parsers }));
  };
  // One connection that cannot break, so it has no errors to report.
  const connection = { query: run, on: () => connection, off: () => connection };
  const lease = async () => {
    const giveBack = await take(db);
    return { ...connection, release: giveBack };
  };
  const pool = {
    options: { max: 1 },
    totalCount: 1,
    get waitingCount() {
      return turnsOf.get(db)?.waiting ?? 0;
    },
    get idleCount() {
      return turnsOf.get(db)?.busy ? 0 : 1;
    },
    get ended() {
      return ended;
    },
    on: () => pool,
    async query(statement: Statement, values?: unknown[]) {
      const giveBack = await take(db);
      try {
        return await run(statement, values);
      } finally {
        giveBack();
      }
    },
    connect(callback?: (err: undefined, client: unknown, done: () => void) => void) {
      if (!callback) return lease();
      void lease().then((client) => callback(undefined, client, client.release));
    },
    async end() {
      ended = true;
    },
  };
  return pool as unknown as pg.Pool;
}
