import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeJson, encodeMetadata, encodeTranscript } from '../src/values/encode.js';
import { isCkptError } from '../src/values/errors.js';

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(isCkptError(err, 'INVALID_ARGUMENT')).toBe(true);
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('encodeJson', () => {
  it('encodes like JSON.stringify for valid values', () => {
    const value = { b: [1, 'x', null, { c: true }], a: -0.5 };
    expect(encodeJson(value, 'data').text).toBe(JSON.stringify(value));
  });

  // Long strings are quoted by ckpt's own code, which must write exactly what JSON.stringify
  // writes: strings made of the characters that need escaping (or might be mistaken for them),
  // short and long, sparse and dense, in every position of a value.
  it('writes the same text as JSON.stringify for any value, long strings included, and copies it as JSON reads it back', () => {
    const tricky = [
      'a',
      ' ',
      'é',
      '😀',
      '"',
      '\\',
      '\n',
      '\r',
      '\t',
      '\b',
      '\u0001',
      '\u001f',
      '\u007f',
      '\u2028',
      '\ud800',
      '\udc00',
      '/',
    ];
    const text = fc.oneof(
      fc.string({ unit: fc.constantFrom(...tricky), maxLength: 300 }),
      fc
        .tuple(
          fc.string({ unit: fc.constantFrom(...tricky), maxLength: 8 }),
          fc.integer({ min: 1, max: 200 }),
        )
        .map(([piece, times]) => `${'x'.repeat(100)}${piece.repeat(times)}`),
    );
    const value = fc.letrec((tie) => ({
      json: fc.oneof(
        { depthSize: 'small' },
        fc.constant(null),
        fc.boolean(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        text,
        fc.array(tie('json')),
        fc.dictionary(fc.oneof(text, fc.constant('__proto__')), tie('json')),
      ),
    })).json;
    fc.assert(
      fc.property(value, (v) => {
        const { value: copied, text } = encodeJson(v, 'data');
        expect(text).toBe(JSON.stringify(v));
        expect(copied).toStrictEqual(JSON.parse(text));
        expect(JSON.stringify(copied)).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses with PAYLOAD_TOO_LARGE a value whose text is longer than a string can be', () => {
    const huge = 'x'.repeat(2 ** 27);
    try {
      encodeJson([huge, huge, huge, huge, huge], 'data');
      expect.unreachable('a value of 640 million characters was encoded');
    } catch (err) {
      expect(isCkptError(err, 'PAYLOAD_TOO_LARGE')).toBe(true);
      expect((err as Error).message).toMatch(/^data encodes to more text/);
    }
  });

  it('returns a copy equal to what decoding the text gives, sharing no object with the input', () => {
    const inner = { z: 1, a: [2, { b: undefined, c: -0 }] };
    const value = { inner, list: [inner], proto: JSON.parse('{"__proto__": {"p": 1}}') };
    const { value: copy, text } = encodeJson(value, 'data');
    expect(copy).toStrictEqual(JSON.parse(text));
    expect(JSON.stringify(copy)).toBe(text);
    const out = copy as { inner: unknown; list: unknown[]; proto: object };
    expect(out.inner).not.toBe(inner);
    expect(out.list[0]).not.toBe(out.inner);
    expect(Object.is((out.inner as { a: [number, { c: number }] }).a[1].c, 0)).toBe(true);
    expect(Object.getPrototypeOf(out.proto)).toBe(Object.prototype);
    expect(Object.hasOwn(out.proto, '__proto__')).toBe(true);
    inner.z = 99;
    expect((out.inner as { z: number }).z).toBe(1);
  });

  it('reads a getter once, so the copy and the text cannot disagree', () => {
    let reads = 0;
    const value = {
      get n() {
        reads++;
        return reads;
      },
    };
    const { value: copy, text } = encodeJson(value, 'data');
    expect(reads).toBe(1);
    expect(text).toBe('{"n":1}');
    expect(copy).toEqual({ n: 1 });
  });

  it('names paths with dots for identifiers and brackets for other keys', () => {
    expect(refusal(() => encodeJson({ a: { 'b c': [0, { $d: Number.NaN }] } }, 'data'))).toContain(
      'data.a["b c"][1].$d',
    );
  });

  it('refuses nesting too deep to encode instead of crashing', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(refusal(() => encodeJson(deep, 'data'))).toMatch(/nested too deeply/);
  });

  it('accepts the same object twice when it is not a cycle', () => {
    const shared = { x: 1 };
    expect(encodeJson({ a: shared, b: shared }, 'data').text).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it('says what to store instead of a Date', () => {
    expect(refusal(() => encodeJson({ at: new Date(0) }, 'data'))).toMatch(/toISOString/);
  });
});

describe('encodeMetadata and encodeTranscript', () => {
  it('default to {} and []', () => {
    expect(encodeMetadata(undefined, 'metadata')).toEqual({ value: {}, text: '{}' });
    expect(encodeTranscript(undefined, 'transcript')).toEqual({ value: [], text: '[]' });
  });

  it('refuse the wrong container', () => {
    expect(refusal(() => encodeMetadata([], 'metadata'))).toMatch(/plain object/);
    expect(refusal(() => encodeTranscript({}, 'transcript'))).toMatch(/array/);
  });
});
