import { describe, expect, it } from 'vitest';
import { isCkptError } from '../src/index.js';
import { migrationStart } from '../src/sql/migrate.js';

const where = "namespace 'x'";
const start = (found: Parameters<typeof migrationStart>[0]) =>
  migrationStart(found, 3, where, '@ckpt/demo');
const refusal = (found: Parameters<typeof migrationStart>[0]) => {
  try {
    start(found);
  } catch (err) {
    expect(isCkptError(err, 'SCHEMA')).toBe(true);
    return (err as Error).message;
  }
  throw new Error('expected SCHEMA');
};

describe('migrationStart', () => {
  it('starts a new namespace at 0 and a recorded one at its version', () => {
    expect(start({ hasMeta: false, recorded: undefined, ownTables: [] })).toBe(0);
    expect(start({ hasMeta: true, recorded: undefined, ownTables: ['x_kv'] })).toBe(0);
    expect(start({ hasMeta: true, recorded: '2', ownTables: ['x_sessions'] })).toBe(2);
  });

  it('refuses a newer version, saying which package to upgrade', () => {
    expect(refusal({ hasMeta: true, recorded: '4', ownTables: [] })).toMatch(
      /version 4.*upgrade @ckpt\/demo/,
    );
  });

  it('refuses an unknown version and tables ckpt did not create', () => {
    expect(refusal({ hasMeta: true, recorded: 'banana', ownTables: [] })).toMatch(/unknown/);
    expect(refusal({ hasMeta: true, recorded: null, ownTables: [] })).toMatch(/unknown/);
    expect(refusal({ hasMeta: false, recorded: undefined, ownTables: ['x_sessions'] })).toMatch(
      /did not create/,
    );
  });
});

describe('migrationStart for a namespace that must exist (create: false)', () => {
  const existing = { at: '"./agent.db"', check: 'the path and the namespace' };
  const startExisting = (found: Parameters<typeof migrationStart>[0]) => {
    try {
      return migrationStart(found, 3, where, '@ckpt/demo', existing);
    } catch (err) {
      return err as Error & { code: string };
    }
  };

  it('goes on from a namespace at the latest version, changing nothing', () => {
    expect(startExisting({ hasMeta: true, recorded: '3', ownTables: ['x_sessions'] })).toBe(3);
  });

  it('refuses a namespace without the tables, or without this store in its meta table, with NOT_FOUND', () => {
    for (const found of [
      { hasMeta: false, recorded: undefined, ownTables: [] },
      { hasMeta: true, recorded: undefined, ownTables: ['x_kv'] },
    ]) {
      const err = startExisting(found) as Error & { code: string };
      expect(err.code).toBe('NOT_FOUND');
      expect(err.message).toBe(
        `there is no ckpt store in namespace 'x' at "./agent.db" (it holds no ckpt tables); check the path and the namespace, or open it without { create: false } to create a new store there.`,
      );
    }
  });

  it('refuses an older version with SCHEMA, saying to open it once the usual way to upgrade it', () => {
    const err = startExisting({ hasMeta: true, recorded: '2', ownTables: [] }) as Error & {
      code: string;
    };
    expect(err.code).toBe('SCHEMA');
    expect(err.message).toMatch(
      /^namespace 'x' at "\.\/agent\.db" has ckpt schema version 2, older than the 3 this @ckpt\/demo uses.*open it once without \{ create: false \}/,
    );
  });

  it('still refuses a newer version and tables ckpt did not create with SCHEMA', () => {
    for (const found of [
      { hasMeta: true, recorded: '4', ownTables: [] },
      { hasMeta: false, recorded: undefined, ownTables: ['x_sessions'] },
    ]) {
      expect((startExisting(found) as Error & { code: string }).code).toBe('SCHEMA');
    }
  });
});
