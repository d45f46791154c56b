/**
 * Layout version 2, on a single server and on a cluster: checkpoint data, transcript items and
 * state values held as bytes (an encoded value without base64), read back exactly, and a
 * namespace of version 1 upgraded in place, its text values read as they are.
 */
import { expectCkptError } from '@ckpt/contract-tests';
import { CheckpointStore, compress, encrypt, type JsonValue, type StoreOptions } from '@ckpt/core';
import { storedBytesOf, textFromStoredBytes } from '@ckpt/core/adapter';
import type { RedisBackend } from '@ckpt/redis';
import { describe, expect, it } from 'vitest';
import { LAYOUT_VERSION } from '../src/migrate.js';
import { markerKey, sessionKeys, stateKeys } from '../src/schema.js';
import { markLayoutOne, writingLayoutOne } from './layout-one.js';
import { admin, backendsOn, freshNamespace, keysOf, servers } from './support.js';

const KEY = Buffer.alloc(32, 7);
const sealed: StoreOptions = {
  codecs: [compress('gzip'), encrypt({ keys: { k1: KEY }, current: 'k1' })],
};
/** The same keys, and a new current one: every value sealed before is rewritten by reencode(). */
const resealed: StoreOptions = {
  codecs: [
    compress('gzip'),
    encrypt({ keys: { k1: KEY, k2: Buffer.alloc(32, 9) }, current: 'k2' }),
  ],
};

/** A value whose JSON is not all ASCII, big enough that gzip leaves many bytes. */
function agentState(step: number): JsonValue {
  const notes = Array.from({ length: 40 }, (_, n) => `note ${step}.${n}: café ☕ 😀 ${n * step}`);
  return { step, notes };
}
const items = (step: number) => [{ role: 'user', text: `step ${step}: naïve?` }, { step }];

/** Checkpoint `agentState(step)` with `items(step)` on `sessionId`, for each of `steps`. */
async function checkpoints(store: CheckpointStore, sessionId: string, steps: number[]) {
  for (const step of steps) {
    await store.checkpoint(sessionId, agentState(step), { transcript: items(step) });
  }
}

/** A session's transcript items, oldest first. */
async function itemsOf(store: CheckpointStore, sessionId: string): Promise<unknown[]> {
  return (await store.transcript(sessionId)).items.map((entry) => entry.item).reverse();
}

describe.each(servers)('redis values as bytes on $name', ({ cluster, up }) => {
  const open = backendsOn(cluster);

  /** What Redis holds for a checkpoint: its data, the session's copy of it, its items. */
  async function heldCheckpoint(backend: RedisBackend, sessionId: string, seq: number) {
    const k = sessionKeys(backend.namespace, sessionId);
    const raw = admin(cluster);
    return {
      data: await raw.hgetBuffer(k.data, String(seq)),
      transcript: await raw.hgetBuffer(k.transcript, String(seq)),
      copy:
        (await raw.hget(k.session, 'hseq')) === String(seq)
          ? await raw.hgetBuffer(k.session, 'hdata')
          : null,
    };
  }

  async function heldState(backend: RedisBackend, scope: string, key: string) {
    return admin(cluster).hgetBuffer(stateKeys(backend.namespace, scope).values, key);
  }

  /** `held` is an encoded value as bytes: the marker, then the sealed bytes, not their base64. */
  function expectEncodedBytes(held: Buffer | null) {
    expect(held).not.toBeNull();
    expect(held!.subarray(0, 7).toString('latin1')).toBe('ckpt1b;');
    const text = textFromStoredBytes(held!);
    expect(text.startsWith('ckpt1;')).toBe(true);
    expect(storedBytesOf(text).equals(held!)).toBe(true);
    // The header (one byte longer: `ckpt1b;`), then three bytes for each four base64 characters.
    const payload = text.length - text.lastIndexOf(';') - 1;
    expect(held!.length).toBe(text.length - payload + 1 + (payload * 3) / 4 - padding(text));
  }
  const padding = (base64: string) => (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);

  it.skipIf(!up)(
    'stores an encoded value as its bytes and a plain one as its JSON, and reads both back exactly',
    async () => {
      const backend = open();
      const plain = new CheckpointStore(backend);
      const store = new CheckpointStore(backend, sealed);
      await store.checkpoint('e', agentState(1), { transcript: items(1) });
      await store.state('x').set('k', agentState(2));
      await plain.checkpoint('p', agentState(3), { transcript: items(3) });
      await plain.state('x').set('p', agentState(4));

      const encoded = await heldCheckpoint(backend, 'e', 1);
      expectEncodedBytes(encoded.data);
      expect(encoded.data!.length).toBeLessThan(textFromStoredBytes(encoded.data!).length * 0.8);
      expectEncodedBytes(encoded.transcript);
      expect(encoded.copy?.equals(encoded.data!)).toBe(true);
      expectEncodedBytes(await heldState(backend, 'x', 'k'));
      // Bytes that are no UTF-8: a reply decoded as text would have mangled them.
      expect(encoded.data!.toString('utf8').includes('\ufffd')).toBe(true);

      const utf8 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');
      const held = await heldCheckpoint(backend, 'p', 1);
      expect(held.data).toEqual(utf8(agentState(3)));
      expect(held.copy).toEqual(utf8(agentState(3)));
      expect(held.transcript).toEqual(utf8(items(3)));
      expect(await heldState(backend, 'x', 'p')).toEqual(utf8(agentState(4)));

      // Every read that returns a value: the head's copy, by seq, by key, transcript, export, fork.
      await store.checkpoint('e', agentState(5), { transcript: items(5), idempotencyKey: 'i' });
      expect((await store.load('e'))?.data).toEqual(agentState(5));
      expect((await store.load('e', 1))?.data).toEqual(agentState(1));
      expect((await store.checkpoint('e', agentState(5), { idempotencyKey: 'i' })).seq).toBe(2);
      expect(await itemsOf(store, 'e')).toEqual([...items(1), ...items(5)]);
      expect(await store.state('x').get('k')).toEqual(agentState(2));
      await store.fork('e', { newId: 'f', atSeq: 1 });
      expect((await store.load('f'))?.data).toEqual(agentState(1));
      expect((await heldCheckpoint(backend, 'f', 1)).data).toEqual(encoded.data);
      const exported = await store.exportSession('e');
      await store.importSession({ ...exported!, sessionId: 'copy' });
      expect((await store.load('copy', 1))?.data).toEqual(agentState(1));
      expectEncodedBytes((await heldCheckpoint(backend, 'copy', 1)).data);
      await store.rollback('e', 1);
      expect((await store.load('e'))?.data).toEqual(agentState(1));
    },
  );

  it.skipIf(!up)(
    'upgrades a namespace of layout version 1: its text values read back, new ones are bytes, reencode() rewrites both',
    async () => {
      const backend = open();
      const old = writingLayoutOne(backend);
      await checkpoints(new CheckpointStore(old, sealed), 'e', [1, 2]);
      await checkpoints(new CheckpointStore(old), 'p', [3]);
      await new CheckpointStore(old, sealed).state('x').set('k', agentState(4));
      await new CheckpointStore(old, sealed).state('x').set('u', 1);
      await new CheckpointStore(old).state('x').set('p', agentState(5));
      await markLayoutOne(backend);
      expect((await heldCheckpoint(backend, 'e', 1)).data?.toString('latin1')).toMatch(/^ckpt1;/);

      // Opening marks the namespace as this version, which version 1 refuses as a layout it
      // does not know; the values stay as they are.
      const upgraded = open(backend.namespace);
      const store = new CheckpointStore(upgraded, sealed);
      await upgraded.ready();
      expect(await admin(cluster).get(markerKey(backend.namespace))).toBe(LAYOUT_VERSION);
      expect((await store.load('e'))?.data).toEqual(agentState(2));
      expect((await store.load('e', 1))?.data).toEqual(agentState(1));
      expect((await store.load('p'))?.data).toEqual(agentState(3));
      expect(await itemsOf(store, 'e')).toEqual([...items(1), ...items(2)]);
      expect(await store.state('x').get('k')).toEqual(agentState(4));
      expect(await store.state('x').get('p')).toEqual(agentState(5));
      // A compare-and-set against a value version 1 wrote.
      expect(await store.state('x').update('u', (n) => Number(n) + 1)).toBe(2);
      expectEncodedBytes(await heldState(upgraded, 'x', 'u'));

      await checkpoints(store, 'e', [6]);
      expectEncodedBytes((await heldCheckpoint(upgraded, 'e', 3)).data);
      expectEncodedBytes((await heldCheckpoint(upgraded, 'e', 3)).copy);
      await store.fork('e', { newId: 'f', atSeq: 2 });
      expect((await store.load('f'))?.data).toEqual(agentState(2));

      // Text of version 1 and bytes of version 2, rewritten under a new key alike.
      const again = new CheckpointStore(upgraded, resealed);
      expect(await again.reencode()).toEqual({ checkpoints: 6, state: 3 });
      for (const [sessionId, seq, step] of [
        ['e', 1, 1],
        ['e', 2, 2],
        ['e', 3, 6],
        ['p', 1, 3],
        ['f', 1, 1],
        ['f', 2, 2],
      ] as const) {
        const held = await heldCheckpoint(upgraded, sessionId, seq);
        expectEncodedBytes(held.data);
        expectEncodedBytes(held.transcript);
        expect(textFromStoredBytes(held.data!)).toMatch(/:k2;/);
        expect((await again.load(sessionId, seq))?.data).toEqual(agentState(step));
      }
      for (const key of ['k', 'p', 'u']) expectEncodedBytes(await heldState(upgraded, 'x', key));
      expect(await again.state('x').get('p')).toEqual(agentState(5));
      expect(await again.reencode()).toEqual({ checkpoints: 0, state: 0 });
    },
  );

  it.skipIf(!up)(
    'refuses a namespace marked with a layout it does not know, also when opened to create, and stores no value there',
    async () => {
      const namespace = freshNamespace();
      await admin(cluster).set(markerKey(namespace), '9');
      const backend = open(namespace);
      const err = await expectCkptError(backend.ready(), 'SCHEMA');
      expect(err.message).toMatch(
        /namespace '.*' has ckpt layout version "9".*upgrade @ckpt\/redis/,
      );
      const store = new CheckpointStore(backend);
      await expectCkptError(store.checkpoint('s', 1), 'SCHEMA');
      await expectCkptError(store.state('x').set('k', 1), 'SCHEMA');
      expect(await keysOf(admin(cluster), namespace)).toEqual([markerKey(namespace)]);
      expect(await admin(cluster).get(markerKey(namespace))).toBe('9');
    },
  );
});
