/** SessionValues.open: a value that needs no lookup is given back at once, not as a promise. */
import { randomBytes } from 'node:crypto';
import { memory } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';
import { CodecChain } from '../src/codecs/chain.js';
import { compress, encrypt } from '../src/index.js';
import { SessionValues, sealCheckpointValue } from '../src/store/session-values.js';

const chain = new CodecChain([
  compress('gzip', { minBytes: 0 }),
  encrypt({ keys: { k1: randomBytes(32) }, current: 'k1' }),
]);

describe('SessionValues.open', () => {
  it('gives plain text, and a value sealed for its own session, back as a string at once', () => {
    const values = new SessionValues(memory(), chain, 's');
    expect(values.open('{"a":1}', 'data', 1)).toBe('{"a":1}');
    const sealed = sealCheckpointValue(chain, 's', 'data', '{"a":2}');
    expect(sealed.startsWith('ckpt1;')).toBe(true);
    expect(values.open(sealed, 'data', 1)).toBe('{"a":2}');
  });

  it('looks the session a value was sealed for up among the sources of forks once, then answers at once', async () => {
    const backend = memory();
    await backend.append({
      sessionId: 'source',
      data: sealCheckpointValue(chain, 'source', 'data', '{"n":1}'),
      metadata: '{}',
      transcript: '[]',
      expectedHead: undefined,
      idempotencyKey: undefined,
      now: 1,
      needs: [],
    });
    await backend.fork({ sessionId: 'source', atSeq: null, newId: 'fork', now: 2 });
    const stored = (await backend.load('fork', 1))!.data;
    const values = new SessionValues(backend, chain, 'fork');
    const first = values.open(stored, 'data', 1);
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toBe('{"n":1}');
    expect(values.open(stored, 'data', 1)).toBe('{"n":1}');
  });
});
