/** compress() and encrypt(): what they accept, what they store, and moving a store between codecs. */
import { randomBytes } from 'node:crypto';
import * as zlib from 'node:zlib';
import { memory } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';
import {
  CheckpointStore,
  type CkptErrorCode,
  compress,
  copyStore,
  encrypt,
  isCkptError,
  openStore,
} from '../src/index.js';

function refusal(fn: () => unknown): { code: CkptErrorCode; message: string } {
  try {
    fn();
  } catch (err) {
    if (isCkptError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('expected a CkptError');
}

async function refusalOf(promise: Promise<unknown>) {
  const err = await promise.catch((e: unknown) => e);
  if (!isCkptError(err)) throw new Error(`expected a CkptError, got ${String(err)}`);
  return err;
}

const LONG = { text: 'a checkpoint long enough to compress well. '.repeat(40) };
const hasZstd = typeof (zlib as { zstdCompressSync?: unknown }).zstdCompressSync === 'function';

describe('compress()', () => {
  for (const kind of ['gzip', 'deflate', 'brotli'] as const) {
    it(`stores a value compressed with ${kind}, and reads it back`, async () => {
      const store = new CheckpointStore(memory(), { codecs: [compress(kind)] });
      await store.checkpoint('s', LONG);
      const raw = await store.backend.load('s', null);
      expect(raw?.data.startsWith(`ckpt1;${kind};`)).toBe(true);
      expect(raw!.data.length).toBeLessThan(JSON.stringify(LONG).length / 4);
      expect((await store.load('s'))?.data).toEqual(LONG);
    });
  }

  it("holds a session's id only in a value it encrypts, and reads a compressed value that holds it", async () => {
    const key = randomBytes(32);
    const plain = new CheckpointStore(memory(), { codecs: [compress('gzip')] });
    await plain.checkpoint('a-long-session-id', LONG);
    const compressed = (await plain.backend.load('a-long-session-id', null))!.data;
    // Nothing but an encryption binds a value to its session: the id would be bytes for nothing.
    expect(compressed.startsWith('ckpt1;gzip;;')).toBe(true);
    // Values written before, with the id, read as they did.
    const withOwner = compressed.replace('ckpt1;gzip;;', 'ckpt1;gzip;a-long-session-id;');
    await plain.backend.append({
      sessionId: 'a-long-session-id',
      data: withOwner,
      metadata: '{}',
      transcript: '[]',
      expectedHead: 1,
      idempotencyKey: undefined,
      now: Date.now(),
      needs: [],
    });
    expect((await plain.load('a-long-session-id'))?.data).toEqual(LONG);
    const sealed = new CheckpointStore(memory(), {
      codecs: [compress('gzip'), encrypt({ keys: { k1: key }, current: 'k1' })],
    });
    await sealed.checkpoint('a-long-session-id', LONG);
    const stored = (await sealed.backend.load('a-long-session-id', null))!.data;
    expect(stored.startsWith('ckpt1;gzip,aes-256-gcm:k1;a-long-session-id;')).toBe(true);
  });

  it('leaves a value below minBytes, or one compression would not shrink, as it is', async () => {
    const store = new CheckpointStore(memory(), {
      codecs: [compress('gzip', { minBytes: 10_000 })],
    });
    await store.checkpoint('s', LONG);
    expect((await store.backend.load('s', null))?.data).toBe(JSON.stringify(LONG));
    // gzip's header alone is longer than this value.
    const eager = new CheckpointStore(memory(), { codecs: [compress('gzip', { minBytes: 0 })] });
    await eager.state('s').set('k', 'short');
    expect(await eager.backend.stateGet('s', 'k')).toBe('"short"');
  });

  it('offers zstd only where this Node has it', () => {
    if (hasZstd) {
      expect(compress('zstd').name).toBe('zstd');
    } else {
      const err = refusal(() => compress('zstd'));
      expect(err.code).toBe('UNSUPPORTED');
      expect(err.message).toContain('22.15');
    }
  });

  it('refuses an unknown kind and a bad minBytes', () => {
    expect(refusal(() => compress('lz4' as never)).code).toBe('INVALID_ARGUMENT');
    expect(refusal(() => compress('gzip', { minBytes: -1 })).code).toBe('INVALID_ARGUMENT');
    expect(refusal(() => compress('gzip', { minbytes: 1 } as never))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'compress() options has no option "minbytes"; its only option is minBytes.',
    });
  });
});

describe('encrypt()', () => {
  const key = randomBytes(32);

  it('checks its keys when it is made', () => {
    const cases: unknown[] = [
      { keys: { k1: randomBytes(31) }, current: 'k1' },
      { keys: { k1: 'a string key' }, current: 'k1' },
      { keys: { 'k 1': key }, current: 'k 1' },
      { keys: {}, current: 'k1' },
      { keys: { k1: key }, current: 'k2' },
      { keys: { k1: key } },
    ];
    for (const options of cases) {
      expect(refusal(() => encrypt(options as never)).code).toBe('INVALID_ARGUMENT');
    }
  });

  it('names itself when refusing an option it does not have', () => {
    expect(refusal(() => encrypt({ key, current: 'k1' } as never))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'encrypt() options has no option "key"; the options are keys and current.',
    });
    expect(refusal(() => encrypt('k1' as never)).message).toBe(
      'encrypt() options must be an object, got "k1".',
    );
  });

  it('seals every value under a nonce of its own, across many values', async () => {
    const store = new CheckpointStore(memory(), {
      codecs: [encrypt({ keys: { k1: key }, current: 'k1' })],
    });
    const nonces = new Set<string>();
    // More values than one fill of the nonce pool holds.
    for (let i = 0; i < 1000; i++) {
      await store.state('s').set('k', 'the same value');
      const stored = (await store.backend.stateGet('s', 'k'))!;
      const bytes = Buffer.from(stored.slice(stored.lastIndexOf(';') + 1), 'base64');
      nonces.add(bytes.subarray(0, 12).toString('hex'));
    }
    expect(nonces.size).toBe(1000);
  });

  it('takes a Uint8Array, and copies it', async () => {
    const bytes = new Uint8Array(randomBytes(32));
    const store = new CheckpointStore(memory(), {
      codecs: [encrypt({ keys: { k1: bytes }, current: 'k1' })],
    });
    bytes.fill(0);
    await store.checkpoint('s', { a: 1 });
    expect((await store.load('s'))?.data).toEqual({ a: 1 });
    expect(Object.keys(encrypt({ keys: { k1: key }, current: 'k1' }))).toEqual(['name']);
  });
});

describe('the codecs option', () => {
  const sealed = () => encrypt({ keys: { k1: randomBytes(32) }, current: 'k1' });

  it('refuses what is not a chain of codecs, and a chain that cannot work', () => {
    const bad: unknown[] = [
      compress('gzip'),
      [{ name: 'gzip' }],
      [sealed(), sealed()],
      [sealed(), compress('gzip')],
    ];
    for (const codecs of bad) {
      expect(refusal(() => new CheckpointStore(memory(), { codecs: codecs as never })).code).toBe(
        'INVALID_ARGUMENT',
      );
    }
  });

  it('refuses a value made by a codec it does not know, and a damaged one', async () => {
    const store = new CheckpointStore(memory());
    await store.state('s').set('k', 1);
    await store.backend.stateSet('s', 'unknown', 'ckpt1;lz4;;AAAA');
    await store.backend.stateSet('s', 'damaged', 'ckpt1;gzip;;AAAA');
    await store.backend.stateSet('s', 'cut', 'ckpt1;gzip');
    expect((await refusalOf(store.state('s').get('unknown'))).details).toMatchObject({
      reason: 'codec',
      codec: 'lz4',
    });
    expect((await refusalOf(store.state('s').get('damaged'))).details.reason).toBe('damaged');
    expect((await refusalOf(store.state('s').get('cut'))).details.reason).toBe('damaged');
    if (!hasZstd) {
      await store.backend.stateSet('s', 'zstd', 'ckpt1;zstd;;AAAA');
      expect((await refusalOf(store.state('s').get('zstd'))).code).toBe('UNREADABLE');
    }
  });

  it('says where a value it cannot read is: the checkpoint and session, or the state key', async () => {
    const backend = memory();
    const writer = new CheckpointStore(backend, {
      codecs: [compress('gzip', { minBytes: 1 }), sealed()],
    });
    await writer.checkpoint('s', { n: 1 }, { transcript: ['one'] });
    await writer.checkpoint('s', { n: 2 }, { transcript: ['two'] });
    await writer.state('prefs').set('theme', 'dark');
    await backend.stateSet('prefs', 'damaged', 'ckpt1;gzip;;AAAA');
    const readers = {
      'no encrypt()': new CheckpointStore(backend),
      'another key': new CheckpointStore(backend, {
        codecs: [encrypt({ keys: { k2: randomBytes(32) }, current: 'k2' })],
      }),
      'a wrong key': new CheckpointStore(backend, { codecs: [sealed()] }),
    };
    for (const [what, reader] of Object.entries(readers)) {
      const checkpoint = /^a stored value of checkpoint 1 of session "s" /;
      expect((await refusalOf(reader.load('s', 1))).message, what).toMatch(checkpoint);
      expect((await refusalOf(reader.load('s'))).message, what).toMatch(
        /^a stored value of checkpoint 2 of session "s" /,
      );
      expect((await refusalOf(reader.transcript('s'))).message, what).toMatch(
        /^a stored value of checkpoint 2 of session "s" /,
      );
      expect((await refusalOf(reader.state('prefs').get('theme'))).message, what).toMatch(
        /^a stored value of state key "theme" of scope "prefs" /,
      );
      expect((await refusalOf(reader.state('prefs').get('damaged'))).message, what).toMatch(
        /^a stored value of state key "damaged" of scope "prefs" /,
      );
    }
  });

  it('is taken by openStore', async () => {
    const store = await openStore('memory:', { codecs: [compress('gzip'), sealed()] });
    await store.checkpoint('s', LONG);
    expect((await store.backend.load('s', null))?.data).toMatch(/^ckpt1;gzip,aes-256-gcm:k1;/);
    expect((await store.load('s'))?.data).toEqual(LONG);
    await store.close();
  });
});

describe('copyStore between codecs', () => {
  it('moves every session and state value from one chain of codecs to another', async () => {
    const first = encrypt({ keys: { old: randomBytes(32) }, current: 'old' });
    const source = new CheckpointStore(memory(), { codecs: [compress('gzip'), first] });
    await source.checkpoint('s', LONG, { transcript: ['hello'], metadata: { m: 1 } });
    await source.checkpoint('s', { n: 2 });
    await source.fork('s', { atSeq: 1, newId: 'f' });
    await source.state('prefs').set('k', LONG);

    const second = encrypt({ keys: { new: randomBytes(32) }, current: 'new' });
    const target = new CheckpointStore(memory(), { codecs: [compress('brotli'), second] });
    await copyStore(source, target);
    for (const id of ['s', 'f']) {
      expect(await target.load(id, 1)).toEqual(await source.load(id, 1));
      expect((await target.transcript(id)).items).toEqual((await source.transcript(id)).items);
    }
    expect(await target.state('prefs').get('k')).toEqual(LONG);
    expect((await target.backend.load('s', 1))?.data).toMatch(/^ckpt1;brotli,aes-256-gcm:new;/);
    expect(await target.backend.stateGet('prefs', 'k')).toMatch(/^ckpt1;brotli,aes-256-gcm:new;/);

    const plain = new CheckpointStore(memory());
    await copyStore(target, plain);
    expect((await plain.backend.load('s', 1))?.data).toBe(JSON.stringify(LONG));
    expect(await plain.state('prefs').get('k')).toEqual(LONG);
  });
});
