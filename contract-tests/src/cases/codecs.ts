/**
 * Codecs: compressed and encrypted values on the backend, which stores them as it stores any
 * value's text. Raw reads and writes go through the backend itself, as a person with the
 * database's credentials (and without the keys) could.
 */
import { createHash } from 'node:crypto';
import {
  type BackendCapabilities,
  type CheckpointStore,
  compress,
  encrypt,
  isCkptError,
  type JsonValue,
  type StoreOptions,
} from '@ckpt/core';
import { completeBackend } from '@ckpt/core/adapter';
import { describe, expect, it } from 'vitest';
import type { ContractContext } from '../harness.js';
import { sessionReads } from '../session-reads.js';
import { allPages, expectCkptError } from '../util.js';

// Fixed keys, so that a test can look for their bytes in every message it sees.
const KEY1 = createHash('sha256').update('first key').digest();
const KEY2 = createHash('sha256').update('second key').digest();
const KEY_TEXTS = [KEY1, KEY2].flatMap((key) => [
  key.toString('hex'),
  key.toString('base64'),
  key.toString('base64url'),
  key.toString('utf8'),
  key.toString('latin1'),
]);

/** Fail if `err` says anything of a key: its message, details, stack or causes. */
function expectNoKeyMaterial(err: unknown): void {
  for (let e = err as { cause?: unknown } | undefined; e !== undefined; e = e.cause as never) {
    const text = `${(e as Error).message} ${JSON.stringify((e as { details?: unknown }).details)} ${String((e as Error).stack)}`;
    for (const key of KEY_TEXTS) expect(text).not.toContain(key);
    expect(text).not.toContain('card number');
    if (typeof e !== 'object' || e === null) break;
  }
}

/** `expectCkptError`, and no key material in what the error says. */
async function refused(promise: Promise<unknown>, code: Parameters<typeof expectCkptError>[1]) {
  const err = await expectCkptError(promise, code);
  expectNoKeyMaterial(err);
  return err;
}

const SECRET = 'the user said: my card number is 4111 1111 1111 1111';

/** A value with keys out of order, odd text and enough repetition to compress. */
const DATA = {
  zeta: 1,
  alpha: [3, 2, 1],
  '': 'empty key',
  nested: { b: null, a: true, 'é ü 😀': 'unicode' },
  messages: Array.from({ length: 20 }, (_, i) => ({ role: 'user', content: `${SECRET} #${i}` })),
};

const gzipOnly = (): StoreOptions => ({ codecs: [compress('gzip', { minBytes: 16 })] });
const sealedWith = (
  current: string,
  keys: Record<string, Uint8Array> = { k1: KEY1, k2: KEY2 },
): StoreOptions => ({
  codecs: [compress('gzip'), encrypt({ keys, current })],
});

/** Change one character of the encoded bytes of a stored value. */
function flipByte(stored: string): string {
  const at = stored.length - 10;
  const swapped = stored[at] === 'A' ? 'B' : 'A';
  return stored.slice(0, at) + swapped + stored.slice(at + 1);
}

/** Write a raw checkpoint value to the backend, as the database's owner could. */
async function appendRaw(t: ContractContext, sessionId: string, data: string, transcript = '[]') {
  await t.backend.append({
    sessionId,
    data,
    metadata: '{}',
    transcript,
    expectedHead: undefined,
    idempotencyKey: undefined,
    now: Date.now(),
    needs: [],
  });
}

async function rawData(t: ContractContext, sessionId: string, seq: number | null = null) {
  const stored = await t.backend.load(sessionId, seq);
  if (stored === null) throw new Error(`no checkpoint ${seq} in ${sessionId}`);
  return stored;
}

async function transcriptOf(store: CheckpointStore, sessionId: string, limit: number) {
  return allPages((page) => store.transcript(sessionId, page), limit);
}

/** The codecs cases. */
export function codecCases(t: ContractContext, caps: BackendCapabilities): void {
  describe('codecs', () => {
    it('round-trips data, transcript items and state exactly, key order kept', async () => {
      const store = t.storeWith(sealedWith('k1'));
      const written = await store.checkpoint('s', DATA, {
        metadata: { step: 1 },
        transcript: [{ z: 1, a: 2 }, SECRET, 3],
      });
      const loaded = await store.load('s');
      expect(loaded).toEqual(written);
      expect(JSON.stringify(loaded?.data)).toBe(JSON.stringify(DATA));
      expect((await store.transcript('s')).items.map((e) => e.item)).toEqual([
        3,
        SECRET,
        { z: 1, a: 2 },
      ]);
      expect(JSON.stringify((await store.transcript('s')).items[2]?.item)).toBe('{"z":1,"a":2}');
      await store.state('prefs').set('user', DATA);
      expect(JSON.stringify(await store.state('prefs').get('user'))).toBe(JSON.stringify(DATA));
    });

    it('stores no value in the clear, but ids, seqs and metadata', async () => {
      const store = t.storeWith(sealedWith('k1'));
      await store.checkpoint('s', DATA, { metadata: { user: 'ann' }, transcript: [SECRET] });
      await store.state('prefs').set('user', SECRET);
      const raw = await rawData(t, 's');
      expect(raw.data.startsWith('ckpt1;gzip,aes-256-gcm:k1;')).toBe(true);
      expect(raw.data).not.toContain('card number');
      expect(raw.metadata).toBe('{"user":"ann"}');
      const [entry] = await completeBackend(t.backend).lineage('s', {
        fromSeq: null,
        limit: 1,
        transcript: true,
      });
      expect(entry?.transcript).not.toContain('card number');
      expect(await t.backend.stateGet('prefs', 'user')).not.toContain('card number');
      // Compression alone leaves a value shorter than its threshold as it is.
      await t.storeWith(gzipOnly()).checkpoint('small', { a: 1 });
      expect((await rawData(t, 'small')).data).toBe('{"a":1}');
    });

    it('pages transcripts and lists checkpoints as a store without codecs does', async () => {
      const sealed = t.storeWith(sealedWith('k2'));
      for (let i = 1; i <= 7; i++) {
        await sealed.checkpoint(
          'sealed',
          { i },
          { transcript: [`a${i}`, `b${i}`], metadata: { i } },
        );
        await t.store.checkpoint(
          'plain',
          { i },
          { transcript: [`a${i}`, `b${i}`], metadata: { i } },
        );
      }
      const strip = (entries: { seq: number; index: number; item: JsonValue }[]) =>
        entries.map(({ seq, index, item }) => [seq, index, item]);
      expect(strip(await transcriptOf(sealed, 'sealed', 3))).toEqual(
        strip(await transcriptOf(t.store, 'plain', 3)),
      );
      const listed = await allPages((page) => sealed.list('sealed', page), 2);
      expect(listed.map((cp) => [cp.seq, cp.metadata])).toEqual(
        (await allPages((page) => t.store.list('plain', page), 2)).map((cp) => [
          cp.seq,
          cp.metadata,
        ]),
      );
      expect(await sealed.history('sealed')).toEqual([1, 2, 3, 4, 5, 6, 7]);
    });

    it('reads plain values written before codecs, and mixes them with encoded ones', async () => {
      await t.store.checkpoint('s', { plain: true }, { transcript: ['plain item'] });
      await t.store.state('st').set('k', 'plain value');
      await t.storeWith(gzipOnly()).checkpoint('s', DATA, { transcript: [DATA] });
      const sealed = t.storeWith(sealedWith('k1'));
      await sealed.checkpoint('s', { sealed: true }, { transcript: ['sealed item'] });
      expect((await sealed.load('s', 1))?.data).toEqual({ plain: true });
      expect((await sealed.load('s', 2))?.data).toEqual(DATA);
      expect((await sealed.load('s', 3))?.data).toEqual({ sealed: true });
      expect((await transcriptOf(sealed, 's', 2)).map((e) => e.item)).toEqual([
        'sealed item',
        DATA,
        'plain item',
      ]);
      expect(await sealed.state('st').get('k')).toBe('plain value');
      // Compressed values need no codecs to be read.
      expect((await t.store.load('s', 2))?.data).toEqual(DATA);
    });

    it('replays idempotent retries and runs update() compare-and-sets with codecs on', async () => {
      const store = t.storeWith(sealedWith('k1'));
      const first = await store.checkpoint('s', DATA, { idempotencyKey: 'once' });
      const again = await store.checkpoint('s', { other: 1 }, { idempotencyKey: 'once' });
      expect(again).toEqual(first);
      expect((await store.loadByKey('s', 'once'))?.data).toEqual(DATA);
      const updated = await store.update('s', (cp) => ({ n: (cp?.seq ?? 0) + 1 }));
      expect(updated.data).toEqual({ n: 2 });
      const state = store.state('counters');
      expect(await state.setIfAbsent('n', 1)).toBe(true);
      expect(await state.setIfAbsent('n', 5)).toBe(false);
      // Each update compares the stored text it read, which a fresh nonce makes unique.
      const bump = () => state.update('n', (v) => (v as number) + 1);
      if (caps.concurrentWriters) await Promise.all(Array.from({ length: 5 }, bump));
      else for (let i = 0; i < 5; i++) await bump();
      expect(await state.get('n')).toBe(6);
    });

    it('keeps reading old keys after rotation; new values take the current key', async () => {
      await t.storeWith(sealedWith('k1')).checkpoint('s', { by: 'k1' });
      const rotated = t.storeWith(sealedWith('k2'));
      await rotated.checkpoint('s', { by: 'k2' });
      expect((await rotated.load('s', 1))?.data).toEqual({ by: 'k1' });
      expect((await rotated.load('s', 2))?.data).toEqual({ by: 'k2' });
      expect((await rawData(t, 's', 2)).data).toContain('aes-256-gcm:k2;');
    });

    it('refuses a value whose key is missing with UNREADABLE, naming the key', async () => {
      await t.storeWith(sealedWith('k1')).checkpoint('s', DATA, { transcript: ['x'] });
      await t.storeWith(sealedWith('k1')).state('st').set('k', 1);
      const onlyK2 = t.storeWith(sealedWith('k2', { k2: KEY2 }));
      const err = await refused(onlyK2.load('s'), 'UNREADABLE');
      expect(err.details).toMatchObject({ reason: 'key', key: 'k1' });
      await refused(onlyK2.transcript('s'), 'UNREADABLE');
      await refused(onlyK2.state('st').get('k'), 'UNREADABLE');
      const none = await refused(t.store.load('s'), 'UNREADABLE');
      expect(none.details).toMatchObject({ reason: 'key', key: 'k1' });
    });

    it('refuses a checkpoint value changed in the database', async () => {
      const store = t.storeWith(sealedWith('k1'));
      await store.checkpoint('s', DATA, { transcript: [SECRET] });
      const raw = await rawData(t, 's');
      const [entry] = await completeBackend(t.backend).lineage('s', {
        fromSeq: null,
        limit: 1,
        transcript: true,
      });
      await appendRaw(t, 's', flipByte(raw.data), flipByte(entry?.transcript as string));
      const err = await refused(store.load('s'), 'UNREADABLE');
      expect(err.details).toMatchObject({ reason: 'authentication' });
      await refused(store.transcript('s'), 'UNREADABLE');
      expect((await store.load('s', 1))?.data).toEqual(DATA);
    });

    it('refuses, saying where, a value whose stored text is not JSON or a sealed value cut short', async () => {
      const store = t.storeWith(sealedWith('k1'));
      await store.checkpoint('s', DATA);
      const raw = await rawData(t, 's');
      await appendRaw(t, 's', '{"a":', '[1,');
      const data = await refused(store.load('s'), 'UNREADABLE');
      expect(data.details).toMatchObject({ reason: 'damaged' });
      expect(data.message).toContain('checkpoint 2 of session "s"');
      expect((await refused(store.transcript('s'), 'UNREADABLE')).details.reason).toBe('damaged');
      // Only the header of a sealed value is left: damaged, not a key's fault.
      await appendRaw(t, 's', raw.data.slice(0, raw.data.lastIndexOf(';') + 1));
      expect((await refused(store.load('s'), 'UNREADABLE')).details.reason).toBe('damaged');
      await t.backend.stateSet('st', 'k', 'not json');
      const state = await refused(store.state('st').get('k'), 'UNREADABLE');
      expect(state.details.reason).toBe('damaged');
      expect(state.message).toContain('state key "k" of scope "st"');
    });

    it('refuses a checkpoint value moved to another session', async () => {
      const store = t.storeWith(sealedWith('k1'));
      await store.checkpoint('victim', DATA, { transcript: [SECRET] });
      await store.checkpoint('attacker', { mine: true });
      const raw = await rawData(t, 'victim');
      const [entry] = await completeBackend(t.backend).lineage('victim', {
        fromSeq: null,
        limit: 1,
        transcript: true,
      });
      await appendRaw(t, 'attacker', raw.data, entry?.transcript);
      const err = await refused(store.load('attacker'), 'UNREADABLE');
      expect(err.details).toMatchObject({ reason: 'place' });
      await refused(store.transcript('attacker'), 'UNREADABLE');
      // Swapping a session's data and transcript items is refused too.
      await appendRaw(t, 'victim', entry?.transcript as string);
      await refused(store.load('victim'), 'UNREADABLE');
    });

    it('refuses a state value changed, or moved to another key or scope', async () => {
      const state = t.storeWith(sealedWith('k1')).state('st');
      await state.set('a', SECRET);
      const raw = (await t.backend.stateGet('st', 'a')) as string;
      await t.backend.stateSet('st', 'b', raw);
      await t.backend.stateSet('other', 'a', raw);
      await t.backend.stateSet('st', 'c', flipByte(raw));
      for (const [scope, key] of [
        ['st', 'b'],
        ['other', 'a'],
        ['st', 'c'],
      ] as const) {
        const err = await refused(
          t.storeWith(sealedWith('k1')).state(scope).get(key),
          'UNREADABLE',
        );
        expect(err.details).toMatchObject({ reason: 'authentication' });
      }
      expect(await state.get('a')).toBe(SECRET);
    });

    it('reads in forks, forks of forks, and forks whose source was deleted', async () => {
      const store = t.storeWith(sealedWith('k1'));
      await store.checkpoint('root', { n: 1 }, { transcript: ['one'] });
      await store.checkpoint('root', { n: 2 }, { transcript: ['two'] });
      await store.fork('root', { newId: 'child' });
      await store.checkpoint('child', { n: 3 }, { transcript: ['three'] });
      await store.fork('child', { newId: 'grandchild' });
      expect((await store.load('grandchild', 1))?.data).toEqual({ n: 1 });
      expect((await store.load('grandchild'))?.data).toEqual({ n: 3 });
      await store.delete('child');
      expect((await transcriptOf(store, 'grandchild', 2)).map((e) => e.item)).toEqual([
        'three',
        'two',
        'one',
      ]);
    });

    it('exports decoded values, and imports them under the importing store’s codecs', async () => {
      const sealed = t.storeWith(sealedWith('k1'));
      await sealed.checkpoint('s', DATA, { transcript: [SECRET], metadata: { m: 1 } });
      await sealed.checkpoint('s', { n: 2 });
      const exported = await sealed.exportSession('s');
      const checkpoints = [];
      for await (const cp of exported?.checkpoints ?? []) checkpoints.push(cp);
      expect(checkpoints[0]?.data).toEqual(DATA);
      expect(checkpoints[0]?.transcript).toEqual([SECRET]);
      await t.store.importSession({ ...exported!, sessionId: 'copy', checkpoints });
      expect((await rawData(t, 'copy', 1)).data).toBe(JSON.stringify(DATA));
      const rekeyed = t.storeWith(sealedWith('k2'));
      await rekeyed.importSession({ ...exported!, sessionId: 'rekeyed', checkpoints });
      expect((await rawData(t, 'rekeyed', 1)).data).toContain('aes-256-gcm:k2;');
      expect((await rekeyed.load('rekeyed', 1))?.data).toEqual(DATA);
      expect((await transcriptOf(rekeyed, 'rekeyed', 5)).map((e) => e.item)).toEqual([SECRET]);
    });

    it('holds maxPayloadBytes to the value before encoding', async () => {
      const value = 'x'.repeat(98);
      const size = JSON.stringify(value).length;
      const store = t.storeWith({ ...sealedWith('k1'), maxPayloadBytes: size });
      await store.checkpoint('s', value);
      expect((await rawData(t, 's')).data.length).toBeGreaterThan(size);
      await store.state('st').set('k', value);
      await refused(store.checkpoint('s', `${value}x`), 'PAYLOAD_TOO_LARGE');
      await refused(store.state('st').set('k', `${value}x`), 'PAYLOAD_TOO_LARGE');
    });

    it('reencode() rewrites every value under the current key beside a writer, changing nothing else', async () => {
      const old = t.storeWith(sealedWith('k1'));
      for (let i = 1; i <= 3; i++) {
        await old.checkpoint('a', { i, DATA }, { transcript: [`item ${i}`], metadata: { i } });
      }
      await old.fork('a', { atSeq: 2, newId: 'b' });
      for (const key of ['x', 'y', 'z']) await old.state('st').set(key, { key, SECRET });
      const rotated = t.storeWith(sealedWith('k2'));
      // Every ckpt backend rewrites; a backend that cannot list, or a third party's without
      // rewriteCheckpoint, refuses the whole rewrite before it changes anything.
      if (t.backend.rewriteCheckpoint === undefined || !caps.listSessions) {
        await refused(rotated.reencode(), 'UNSUPPORTED');
        expect((await rawData(t, 'a', 1)).data).toContain('aes-256-gcm:k1;');
        return;
      }
      const before = [await sessionReads(rotated, 'a'), await sessionReads(rotated, 'b')];
      // The writer goes on until the rewrite is over, and writes at least five checkpoints.
      let writing = true;
      let written = 0;
      const writer = (async () => {
        while (writing || written < 5) {
          written++;
          await rotated.checkpoint('live', { n: written }, { transcript: [written] });
          await rotated.state('st').set('w', written);
        }
      })();
      const result = await rotated.reencode().finally(() => {
        writing = false;
      });
      await writer;
      expect(result).toEqual({ checkpoints: 5, state: 3 });
      expect(await rotated.reencode()).toEqual({ checkpoints: 0, state: 0 });

      const onlyK2 = t.storeWith(sealedWith('k2', { k2: KEY2 }));
      expect([await sessionReads(onlyK2, 'a'), await sessionReads(onlyK2, 'b')]).toEqual(before);
      for (const key of ['x', 'y', 'z']) {
        expect(await onlyK2.state('st').get(key)).toEqual({ key, SECRET });
        expect(await t.backend.stateGet('st', key)).toContain('aes-256-gcm:k2;');
      }
      // Every checkpoint the writer wrote beside the rewrite is there, and reads under k2 alone.
      const live = await transcriptOf(onlyK2, 'live', 1000);
      expect(live.map((e) => e.item).reverse()).toEqual(
        Array.from({ length: written }, (_, i) => i + 1),
      );
      expect(await onlyK2.state('st').get('w')).toBe(written);
    });

    it('rewriteCheckpoint() replaces a checkpoint’s values only while they are what was read, and nothing else', async () => {
      const rewrite = t.backend.rewriteCheckpoint?.bind(t.backend);
      if (rewrite === undefined) {
        await refused(t.store.reencode(), 'UNSUPPORTED');
        return;
      }
      await t.store.checkpoint('s', { n: 1 }, { transcript: ['one'], metadata: { n: 1 } });
      await t.store.checkpoint('s', { n: 2 }, { metadata: { n: 2 } });
      await t.store.checkpoint('s', { n: 3 }, { transcript: ['three'], needs: [1] });
      await t.store.checkpoint('s', { n: 4 }, { transcript: ['four'], idempotencyKey: 'four' });
      await t.store.fork('s', { newId: 'fork' });
      const fork = await sessionReads(t.store, 'fork');
      const session = await t.backend.session('s');
      const exported = await t.backend.exportCheckpoints('s', { afterSeq: null, limit: 10 });
      const texts = (seq: number) => {
        const cp = exported.find((c) => c.seq === seq)!;
        return { data: cp.data, transcript: cp.transcript };
      };
      const to = { data: '{"n":"four, rewritten"}', transcript: '["four, rewritten"]' };
      // Refused, writing nothing: texts that are not the stored ones, a seq or session not stored.
      for (const from of [
        { ...texts(4), data: '{"n":3}' },
        { ...texts(4), transcript: '["three"]' },
        texts(3),
      ]) {
        expect(await rewrite({ sessionId: 's', seq: 4, from, to })).toBe(false);
      }
      expect(await rewrite({ sessionId: 's', seq: 9, from: texts(4), to })).toBe(false);
      expect(await rewrite({ sessionId: 'none', seq: 4, from: texts(4), to })).toBe(false);
      expect(await t.backend.exportCheckpoints('s', { afterSeq: null, limit: 10 })).toEqual(
        exported,
      );

      // The head (whose data some backends keep a copy of), and one without transcript items.
      expect(await rewrite({ sessionId: 's', seq: 4, from: texts(4), to })).toBe(true);
      const dataOnly = { data: '{"n":"two, rewritten"}', transcript: '[]' };
      expect(await rewrite({ sessionId: 's', seq: 2, from: texts(2), to: dataOnly })).toBe(true);
      // A second rewrite from what the first replaced finds it gone.
      expect(await rewrite({ sessionId: 's', seq: 4, from: texts(4), to: texts(3) })).toBe(false);

      expect((await t.store.load('s'))?.data).toEqual({ n: 'four, rewritten' });
      expect((await t.store.load('s', 2))?.data).toEqual({ n: 'two, rewritten' });
      expect((await t.store.loadByKey('s', 'four'))?.data).toEqual({ n: 'four, rewritten' });
      expect((await transcriptOf(t.store, 's', 10)).map((e) => e.item)).toEqual([
        'four, rewritten',
        'three',
        'one',
      ]);
      const rewritten = new Map([
        [2, dataOnly],
        [4, to],
      ]);
      expect(await t.backend.exportCheckpoints('s', { afterSeq: null, limit: 10 })).toEqual(
        exported.map((cp) => ({ ...cp, ...rewritten.get(cp.seq) })),
      );
      expect(await t.backend.session('s')).toEqual(session);
      expect(await sessionReads(t.store, 'fork')).toEqual(fork);
      // The session goes on as before: the next seq, its parent the head.
      expect(await t.store.checkpoint('s', { n: 5 })).toMatchObject({ seq: 5, parent: 4 });
    });

    it('never puts key material in an error message', async () => {
      const errors: unknown[] = [];
      const collect = (p: Promise<unknown>) => p.catch((err: unknown) => errors.push(err));
      const store = t.storeWith(sealedWith('k1'));
      await store.checkpoint('s', DATA);
      await store.state('st').set('k', 1);
      await t.backend.stateSet('st', 'moved', (await t.backend.stateGet('st', 'k')) as string);
      await appendRaw(t, 'other', (await rawData(t, 's')).data);
      await collect(store.state('st').get('moved'));
      await collect(store.load('other'));
      await collect(t.storeWith(sealedWith('k2', { k2: KEY2 })).load('s'));
      for (const bad of [KEY1.subarray(1), Buffer.concat([KEY1, KEY2])]) {
        await collect(Promise.resolve().then(() => encrypt({ keys: { k1: bad }, current: 'k1' })));
      }
      await collect(Promise.resolve().then(() => encrypt({ keys: { k1: KEY1 }, current: 'k9' })));
      expect(errors).toHaveLength(6);
      for (const err of errors) {
        expect(isCkptError(err)).toBe(true);
        expectNoKeyMaterial(err);
      }
    });
  });
}
