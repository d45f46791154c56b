/** destroy(): removing everything a store holds in its namespace, and nothing else. */
import type { BackendCapabilities } from '@ckpt/core';
import { describe, expect, it } from 'vitest';
import { itIf } from '../gate.js';
import type { ContractContext } from '../harness.js';
import { expectCkptError } from '../util.js';

/** destroy(), where the backend has it; UNSUPPORTED (and nothing removed) where it has not. */
export function destroyCases(
  t: ContractContext,
  caps: BackendCapabilities,
  hasNamespaces: boolean,
): void {
  /** A session with a fork, an idempotency key and transcript items, and a state value. */
  async function fill(store = t.store) {
    await store.checkpoint('s', { step: 1 }, { transcript: ['one'], idempotencyKey: 'k' });
    await store.checkpoint('s', { step: 2 }, { transcript: ['two'] });
    await store.fork('s', { atSeq: 1, newId: 'f' });
    await store.state('x').set('k', { kept: false });
  }

  const hasDestroy = () => typeof t.backend.destroy === 'function';

  describe('destroy', () => {
    it('removes every session and state value; a store opened again on the namespace starts empty', async () => {
      await fill();
      if (!hasDestroy()) {
        await expectCkptError(t.store.destroy(), 'UNSUPPORTED');
        expect((await t.store.load('s'))?.data).toEqual({ step: 2 });
        return;
      }
      await t.store.destroy();
      const again = await t.connect();
      // A harness that shares one backend between stores has no other to open.
      if (again.backend === t.backend) return;
      for (const id of ['s', 'f']) {
        expect(await again.info(id)).toBeNull();
        expect(await again.load(id, 1)).toBeNull();
        expect(await again.history(id)).toEqual([]);
      }
      expect(await again.state('x').get('k')).toBeUndefined();
      if (caps.listSessions) expect((await again.sessions()).items).toEqual([]);
      if (caps.listStateKeys) expect((await again.stateScopes()).items).toEqual([]);
      // Nothing of the old session answers for its id: not its seqs, not its idempotency key.
      const fresh = await again.checkpoint('s', 'new', { idempotencyKey: 'k' });
      expect(fresh).toMatchObject({ seq: 1, parent: null, data: 'new' });
      expect((await again.transcript('s')).items).toEqual([]);
    });

    it('leaves the store closed: every call fails with CLOSED, destroy() again too', async () => {
      if (!hasDestroy()) return;
      await fill();
      await t.store.destroy();
      await expectCkptError(t.store.load('s'), 'CLOSED');
      await expectCkptError(t.store.checkpoint('s', 3), 'CLOSED');
      await expectCkptError(t.store.state('x').get('k'), 'CLOSED');
      await expectCkptError(t.store.destroy(), 'CLOSED');
      await t.store.close();
    });

    itIf(hasNamespaces, 'the harness has no namespaced()')(
      'leaves another namespace on the same storage as it was, even one named with this one as a prefix',
      async () => {
        const unique = `d${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
        const doomed = await t.namespaced(unique);
        const kept = await t.namespaced(`${unique}_b`);
        await fill(doomed);
        await fill(kept);
        if (!hasDestroy()) return;
        await doomed.destroy();
        expect((await kept.load('s'))?.data).toEqual({ step: 2 });
        expect(await kept.history('f')).toEqual([1]);
        expect((await kept.transcript('s')).items.map((e) => e.item)).toEqual(['two', 'one']);
        expect(await kept.state('x').get('k')).toEqual({ kept: false });
        expect((await kept.checkpoint('s', 3, { idempotencyKey: 'k' })).seq).toBe(1);
      },
    );
  });
}
