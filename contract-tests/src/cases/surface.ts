/** The store's surface: errors, close, capabilities and namespaces. */
import {
  type BackendCapabilities,
  type CheckpointBackend,
  CheckpointStore,
  CkptError,
  isCkptError,
} from '@ckpt/core';
import { capabilitiesOf } from '@ckpt/core/adapter';
import { describe, expect, it } from 'vitest';
import { itIf } from '../gate.js';
import type { ContractContext } from '../harness.js';
import { expectCkptError } from '../util.js';

/** Errors, close, capabilities and namespaces. */
export function surfaceCases(
  t: ContractContext,
  caps: BackendCapabilities,
  hasNamespaces: boolean,
): void {
  describe('errors and lifecycle', () => {
    it('raises CkptError with a code, a name and a message that says what to do', async () => {
      const err = await expectCkptError(t.store.rollback('nobody', 1), 'NOT_FOUND');
      expect(err).toBeInstanceOf(CkptError);
      expect(err).toBeInstanceOf(Error);
      expect(err.name).toBe('CkptError');
      expect(err.message).toContain('nobody');
    });

    it('refuses every call after close() with CLOSED, and closing twice is fine', async () => {
      const store = t.storeWith({});
      await store.checkpoint('s', 1);
      await store.close();
      await store.close();
      const calls: (() => Promise<unknown>)[] = [
        () => store.checkpoint('s', 2),
        () => store.update('s', () => 2),
        () => store.load('s'),
        () => store.head('s'),
        () => store.info('s'),
        () => store.history('s'),
        () => store.list('s'),
        () => store.transcript('s'),
        () => store.rollback('s', 1),
        () => store.fork('s'),
        () => store.prune('s', { keepLast: 1 }),
        () => store.delete('s'),
        () => store.sessions(),
        () => store.state('x').get('k'),
        () => store.state('x').set('k', 1),
      ];
      for (const call of calls) await expectCkptError(call(), 'CLOSED');
    });

    it('lets the calls in flight settle before close() releases the connection', async () => {
      const store = await t.connect();
      await store.checkpoint('warm-up', 0);
      const writes = Array.from({ length: 20 }, (_, i) => store.checkpoint(`in-flight-${i}`, i));
      const reads = Array.from({ length: 20 }, () => store.load('warm-up'));
      // A pool ended under queued calls can leave them waiting forever: this test then times out.
      await store.close();
      const written = await Promise.all(writes);
      expect(written.map((c) => c.seq)).toEqual(written.map(() => 1));
      for (const read of await Promise.all(reads)) expect(read?.data).toBe(0);
      await expectCkptError(store.load('warm-up'), 'CLOSED');
      // What they acknowledged is stored: read on the harness's other connection, where it has
      // one (a harness that shares one backend, such as SQLite ':memory:', just closed it).
      if (store.backend !== t.backend) {
        for (let i = 0; i < 20; i++) expect((await t.store.load(`in-flight-${i}`))?.data).toBe(i);
      }
    });

    it('has the capabilities the harness names: the listings its methods show, and what it declares', () => {
      expect(capabilitiesOf(t.backend)).toEqual(caps);
      expect(typeof t.backend.name).toBe('string');
    });

    it('tells them, its name and its deployment checks through the store', async () => {
      expect(t.store.capabilities).toEqual(caps);
      expect(t.store.backendName).toBe(t.backend.name);
      for (const finding of await t.store.diagnose()) {
        expect(typeof finding.check).toBe('string');
        expect(['ok', 'warn', 'fail']).toContain(finding.status);
        expect(typeof finding.detail).toBe('string');
      }
    });

    it('turns a failure inside the backend into BACKEND with the cause attached', async () => {
      const cause = new Error('disk on fire');
      // Everything but load() is the real backend; load() fails as a broken driver would.
      const failing: CheckpointBackend = Object.assign(Object.create(t.backend), {
        load: async () => {
          throw cause;
        },
        close: async () => {},
      });
      const err = await expectCkptError(new CheckpointStore(failing).load('s'), 'BACKEND');
      expect(err.cause).toBe(cause);
      expect(isCkptError(err, 'BACKEND')).toBe(true);
    });
  });

  describe('namespaces', () => {
    itIf(hasNamespaces, 'the harness has no namespaced()')(
      'keeps two namespaces on one storage from seeing each other',
      async () => {
        const unique = `n${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
        const a = await t.namespaced(`${unique}_a`);
        const b = await t.namespaced(`${unique}_b`);
        await a.checkpoint('s', 'in a');
        await a.state('x').set('k', 'in a');
        expect(await b.load('s')).toBeNull();
        expect(await b.state('x').get('k')).toBeUndefined();
        await b.checkpoint('s', 'in b');
        expect((await a.load('s'))?.data).toBe('in a');
        if (caps.listSessions) {
          expect((await b.sessions()).items.map((s) => s.sessionId)).toEqual(['s']);
        }
        await b.delete('s');
        expect((await a.load('s'))?.data).toBe('in a');
      },
    );
  });
}
