/** `named`: a statement's SQL says which value each parameter takes. */
import { describe, expect, it } from 'vitest';
import { named, positional, prepareEach } from '../src/sql/index.js';

describe('named(text)', () => {
  it('numbers the names by first use, each name one parameter however often it stands', () => {
    const statement = named<{ sessionId: string; seq: number }>(
      'SELECT 1 FROM t WHERE seq = :seq AND id = :sessionId AND parent < :seq',
    );
    expect(statement.sql).toBe('SELECT 1 FROM t WHERE seq = $1 AND id = $2 AND parent < $1');
    expect(statement.args({ sessionId: 'a', seq: 7 })).toEqual([7, 'a']);
  });

  it('takes the values by name, whatever else the input holds', () => {
    const statement = named<{ limit: number }>('SELECT 1 LIMIT :limit');
    expect(statement.args({ limit: 3, other: 'x' } as { limit: number })).toEqual([3]);
  });

  it("leaves PostgreSQL's casts, and names inside words, alone", () => {
    const statement = named<{ after: string | null }>(
      "SELECT x::text FROM t WHERE scope > coalesce(:after::text, '') AND a:b = 1",
    );
    expect(statement.sql).toBe(
      "SELECT x::text FROM t WHERE scope > coalesce($1::text, '') AND a:b = 1",
    );
    expect(statement.args({ after: null })).toEqual([null]);
  });

  it('gives a driver of `?` each value as often as the SQL uses it, in order', () => {
    const { sql, args } = named<{ id: string; fromSeq: number | null }>(
      'WHERE id = :id AND seq = coalesce(:fromSeq, (SELECT head WHERE id = :id))',
    );
    const { sql: text, order } = positional(sql);
    expect(text).toBe('WHERE id = ? AND seq = coalesce(?, (SELECT head WHERE id = ?))');
    expect(order.map((i) => args({ id: 's', fromSeq: null })[i])).toEqual(['s', null, 's']);
  });
});

describe('prepareEach(set, prepare)', () => {
  it('prepares each SQL and keeps each statement its own values', () => {
    const prepared = prepareEach(
      {
        one: named<{ a: number }>('SELECT :a'),
        two: named<{ b: number; a: number }>('SELECT :b, :a'),
      },
      (text) => ({ text }),
    );
    expect(prepared.one.sql).toEqual({ text: 'SELECT $1' });
    expect(prepared.two.sql).toEqual({ text: 'SELECT $1, $2' });
    expect(prepared.two.args({ a: 1, b: 2 })).toEqual([2, 1]);
  });
});
