/** state(scope): the small JSON key-value space. */
import type { BackendCapabilities } from '@ckpt/core';
import { describe, expect, it } from 'vitest';
import { itIf, itWith } from '../gate.js';
import type { ContractContext } from '../harness.js';
import { allPages, expectCkptError } from '../util.js';

/** The state key-value space. */
export function stateCases(t: ContractContext, caps: BackendCapabilities): void {
  const withKeys = itWith(caps, 'listStateKeys');

  describe('state', () => {
    it('returns what was set, and undefined for a key never set', async () => {
      const state = t.store.state('agent');
      expect(await state.get('missing')).toBeUndefined();
      await state.set('config', { model: 'x', temperature: 0.2, tools: ['a'] });
      expect(await state.get('config')).toEqual({ model: 'x', temperature: 0.2, tools: ['a'] });
      await state.set('config', null);
      expect(await state.get('config')).toBeNull();
    });

    it('deletes a key, returning true, then false once it is gone', async () => {
      const state = t.store.state('agent');
      await state.set('k', 1);
      expect(await state.delete('k')).toBe(true);
      expect(await state.delete('k')).toBe(false);
      expect(await state.get('k')).toBeUndefined();
    });

    it('keeps scopes apart from each other and from sessions', async () => {
      await t.store.state('a').set('k', 'in a');
      await t.store.state('b').set('k', 'in b');
      await t.store.checkpoint('k', 'a session');
      expect(await t.store.state('a').get('k')).toBe('in a');
      expect(await t.store.state('b').get('k')).toBe('in b');
      await t.store.delete('k');
      expect(await t.store.state('a').get('k')).toBe('in a');
    });

    it('creates and changes a value with update()', async () => {
      const state = t.store.state('counters');
      expect(await state.update('n', (v) => ((v as number | undefined) ?? 0) + 1)).toBe(1);
      expect(await state.update('n', (v) => (v as number) + 1)).toBe(2);
      expect(await state.get('n')).toBe(2);
    });

    it('passes an error update() fn throws to the caller as it is, writing nothing', async () => {
      const state = t.store.state('s');
      await state.set('k', 'before');
      const mine = new RangeError('no such counter');
      const err = await state
        .update('k', () => {
          throw mine;
        })
        .catch((e: unknown) => e);
      expect(err).toBe(mine);
      expect(await state.get('k')).toBe('before');
    });

    it('refuses a value JSON cannot carry, naming the path and writing nothing', async () => {
      const state = t.store.state('s');
      await state.set('k', 'before');
      const err = await expectCkptError(state.set('k', { n: 10n } as never), 'INVALID_ARGUMENT');
      expect(err.message).toContain('value.n');
      await expectCkptError(
        state.update('k', () => Number.NaN),
        'INVALID_ARGUMENT',
      );
      expect(await state.get('k')).toBe('before');
    });

    it('holds a value to maxPayloadBytes, refusing a larger one with PAYLOAD_TOO_LARGE and writing nothing', async () => {
      const state = t.storeWith({ maxPayloadBytes: 1024 }).state('s');
      await state.set('k', 'before');
      // 1,024 bytes encoded, quotes included: at the limit.
      await state.set('at', 'x'.repeat(1022));
      expect(await state.get('at')).toBe('x'.repeat(1022));
      const err = await expectCkptError(state.set('k', '\u00e9'.repeat(512)), 'PAYLOAD_TOO_LARGE');
      expect(err.details).toEqual({ size: 1026, limit: 1024 });
      await expectCkptError(
        state.update('k', () => 'x'.repeat(1023)),
        'PAYLOAD_TOO_LARGE',
      );
      expect(await state.get('k')).toBe('before');
    });

    withKeys('lists keys ascending by UTF-8 bytes', async () => {
      const state = t.store.state('s');
      const keys = ['b', 'a', 'B', 'a b', '\u{1F99C}', '\uffff', '\u00e9', 'a:b', '~'];
      for (const key of keys) await state.set(key, 1);
      const listed = (await state.keys({ limit: 100 })).items;
      const byBytes = keys.slice().sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      expect(listed).toEqual(byBytes);
    });

    withKeys('filters keys by prefix and walks every page exactly once', async () => {
      const state = t.store.state('s');
      for (let i = 0; i < 25; i++) await state.set(`task:${String(i).padStart(2, '0')}`, i);
      await state.set('other', 0);
      await state.set('task', 0);
      const all = await allPages((p) => state.keys({ ...p, prefix: 'task:' }), 4);
      expect(all).toEqual(
        Array.from({ length: 25 }, (_, i) => `task:${String(i).padStart(2, '0')}`),
      );
      expect((await state.keys({ prefix: 'nothing' })).items).toEqual([]);
    });

    withKeys('treats a prefix with pattern characters literally', async () => {
      const state = t.store.state('s');
      for (const key of ['a%', 'a%b', 'ab', 'a_', 'a_b', 'a*', 'a*b', 'a?', 'a[b]'])
        await state.set(key, 1);
      expect((await state.keys({ prefix: 'a%' })).items).toEqual(['a%', 'a%b']);
      expect((await state.keys({ prefix: 'a_' })).items).toEqual(['a_', 'a_b']);
      expect((await state.keys({ prefix: 'a*' })).items).toEqual(['a*', 'a*b']);
      expect((await state.keys({ prefix: 'a[' })).items).toEqual(['a[b]']);
    });

    withKeys('refuses a keys() cursor of another scope or prefix', async () => {
      for (const key of ['a', 'b', 'c']) await t.store.state('s').set(key, 1);
      const cursor = (await t.store.state('s').keys({ limit: 1 })).cursor;
      await expectCkptError(t.store.state('other').keys({ cursor }), 'INVALID_ARGUMENT');
      await expectCkptError(t.store.state('s').keys({ cursor, prefix: 'b' }), 'INVALID_ARGUMENT');
    });

    itIf(!caps.listStateKeys, 'the backend declares listStateKeys')(
      'refuses keys() with UNSUPPORTED when the backend cannot list',
      async () => {
        await t.store.state('s').set('k', 1);
        await expectCkptError(t.store.state('s').keys(), 'UNSUPPORTED');
      },
    );
  });
}
