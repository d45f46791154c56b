import { describe, expect, it } from 'vitest';
import { encodeJson, encodeMetadata, encodeTranscript } from '../src/encode.js';
import { isCkptError } from '../src/errors.js';

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
    expect(encodeJson(value, 'data')).toBe(JSON.stringify(value));
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
    expect(encodeJson({ a: shared, b: shared }, 'data')).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it('says what to store instead of a Date', () => {
    expect(refusal(() => encodeJson({ at: new Date(0) }, 'data'))).toMatch(/toISOString/);
  });
});

describe('encodeMetadata and encodeTranscript', () => {
  it('default to {} and []', () => {
    expect(encodeMetadata(undefined, 'metadata')).toBe('{}');
    expect(encodeTranscript(undefined, 'transcript')).toBe('[]');
  });

  it('refuse the wrong container', () => {
    expect(refusal(() => encodeMetadata([], 'metadata'))).toMatch(/plain object/);
    expect(refusal(() => encodeTranscript({}, 'transcript'))).toMatch(/array/);
  });
});
