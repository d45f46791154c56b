/** The JSON diff `ckpt diff` prints: paths added, removed and changed between two values. */
import type { JsonValue } from '@ckpt/core';
import { describe, expect, it } from 'vitest';
import { diffJson, pathOf } from '../src/json-diff.js';

/** A value as JSON text reads it, so that a `__proto__` key is plain data. */
const json = (text: string) => JSON.parse(text) as JsonValue;

describe('diffJson', () => {
  it('finds nothing between equal values', () => {
    expect(
      diffJson(json('{"a":[1,{"b":null}],"c":"x"}'), json('{"a":[1,{"b":null}],"c":"x"}')),
    ).toEqual([]);
    expect(diffJson(3, 3)).toEqual([]);
  });

  it('names each change in nested objects by its path', () => {
    expect(
      diffJson(
        json('{"data":{"user":{"name":"Ann","age":30},"gone":1}}'),
        json('{"data":{"user":{"name":"Bo","age":30,"city":"Oslo"}}}'),
      ),
    ).toEqual([
      { path: 'data.user.name', op: 'change', before: 'Ann', after: 'Bo' },
      { path: 'data.user.city', op: 'add', after: 'Oslo' },
      { path: 'data.gone', op: 'remove', before: 1 },
    ]);
  });

  it('compares arrays index by index: appended items are added, dropped ones removed', () => {
    expect(
      diffJson(
        json('{"steps":[{"at":1},{"at":2}]}'),
        json('{"steps":[{"at":1},{"at":5},{"at":3},{"at":4}]}'),
      ),
    ).toEqual([
      { path: 'steps[1].at', op: 'change', before: 2, after: 5 },
      { path: 'steps[2]', op: 'add', after: { at: 3 } },
      { path: 'steps[3]', op: 'add', after: { at: 4 } },
    ]);
    expect(diffJson([1, 2, 3], [1])).toEqual([
      { path: '[1]', op: 'remove', before: 2 },
      { path: '[2]', op: 'remove', before: 3 },
    ]);
  });

  it('takes the same keys in another order as no change', () => {
    expect(diffJson(json('{"a":1,"b":{"x":1,"y":2}}'), json('{"b":{"y":2,"x":1},"a":1}'))).toEqual(
      [],
    );
  });

  it('compares a key named __proto__ as plain data, never as a prototype', () => {
    const before = json('{"__proto__":{"polluted":1},"a":1}');
    const after = json('{"__proto__":{"polluted":2},"a":1}');
    expect(diffJson(before, after)).toEqual([
      { path: '__proto__.polluted', op: 'change', before: 1, after: 2 },
    ]);
    expect(diffJson(json('{}'), json('{"__proto__":[]}'))).toEqual([
      { path: '__proto__', op: 'add', after: [] },
    ]);
    expect(diffJson(json('{"__proto__":0}'), json('{}'))).toEqual([
      { path: '__proto__', op: 'remove', before: 0 },
    ]);
    expect(({} as { polluted?: number }).polluted).toBeUndefined();
  });

  it('reports a change of type as one change of the whole value', () => {
    expect(diffJson(json('{"v":{"a":1}}'), json('{"v":[1]}'))).toEqual([
      { path: 'v', op: 'change', before: { a: 1 }, after: [1] },
    ]);
    expect(diffJson(json('{"v":1}'), json('{"v":"1"}'))).toEqual([
      { path: 'v', op: 'change', before: 1, after: '1' },
    ]);
    expect(diffJson(json('{"v":null}'), json('{"v":{}}'))).toEqual([
      { path: 'v', op: 'change', before: null, after: {} },
    ]);
    expect(diffJson(json('[]'), json('{}'))).toEqual([
      { path: '', op: 'change', before: [], after: {} },
    ]);
  });

  it('quotes a key that is not a plain name', () => {
    expect(diffJson(json('{"a b":1,"":2,"é":3}'), json('{"a b":2,"":3,"é":4}'))).toEqual([
      { path: '["a b"]', op: 'change', before: 1, after: 2 },
      { path: '[""]', op: 'change', before: 2, after: 3 },
      { path: '["é"]', op: 'change', before: 3, after: 4 },
    ]);
    expect(pathOf('data', 'steps')).toBe('data.steps');
    expect(pathOf('data.steps', 3)).toBe('data.steps[3]');
    expect(pathOf('data', 'x"y')).toBe('data["x\\"y"]');
  });
});
