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
