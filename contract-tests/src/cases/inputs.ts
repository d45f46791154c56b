/** The input rules: odd-but-valid ids kept apart, invalid ids and numbers refused. */
import type { BackendCapabilities, CheckpointStore } from '@ckpt/core';
import { describe, expect, it } from 'vitest';
import { itWith } from '../gate.js';
import type { ContractContext } from '../harness.js';
import { allPages, expectCkptError, INVALID_IDS, ODD_IDS } from '../util.js';

/** Every public call that takes a session id, with the id in its place. */
type Call = (s: CheckpointStore, id: never) => Promise<unknown>;
/** [name, call, whether the argument is optional (so undefined is a valid omission)] */
const CALLS_WITH_ID: [string, Call, boolean?][] = [
  ['checkpoint', (s, id) => s.checkpoint(id, 1)],
  ['update', (s, id) => s.update(id, () => 1)],
  ['load', (s, id) => s.load(id)],
  ['loadByKey (session)', (s, id) => s.loadByKey(id, 'k')],
  ['loadByKey (idempotencyKey)', (s, id) => s.loadByKey('exists', id)],
  ['head', (s, id) => s.head(id)],
  ['info', (s, id) => s.info(id)],
  ['history', (s, id) => s.history(id)],
  ['list', (s, id) => s.list(id)],
  ['transcript', (s, id) => s.transcript(id)],
  ['rollback', (s, id) => s.rollback(id, 1)],
  ['fork (source)', (s, id) => s.fork(id)],
  ['fork (newId)', (s, id) => s.fork('exists', { newId: id }), true],
  ['prune', (s, id) => s.prune(id, { keepLast: 1 })],
  ['delete', (s, id) => s.delete(id)],
  [
    'checkpoint (idempotencyKey)',
    (s, id) => s.checkpoint('exists', 1, { idempotencyKey: id }),
    true,
  ],
  ['state (scope)', (s, id) => s.state(id).get('k')],
  ['state.get (key)', (s, id) => s.state('scope').get(id)],
  ['state.set (key)', (s, id) => s.state('scope').set(id, 1)],
  ['state.delete (key)', (s, id) => s.state('scope').delete(id)],
  ['state.update (key)', (s, id) => s.state('scope').update(id, () => 1)],
];

const BAD_NUMBERS: unknown[] = [
  0,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '1',
  2 ** 53,
  null,
];

/** Ids, names and numeric arguments. */
export function inputCases(t: ContractContext, caps: BackendCapabilities): void {
  describe('ids and names', () => {
    it('keeps odd but valid ids apart as different sessions', async () => {
      for (const [i, id] of ODD_IDS.entries()) {
        await t.store.checkpoint(id, { i, id }, { transcript: [id] });
      }
      for (const [i, id] of ODD_IDS.entries()) {
        const loaded = await t.store.load(id);
        expect(loaded?.sessionId).toBe(id);
        expect(loaded?.data).toEqual({ i, id });
        expect(await t.store.head(id)).toBe(1);
        expect((await t.store.transcript(id)).items.map((e) => e.item)).toEqual([id]);
        expect((await t.store.info(id))?.sessionId).toBe(id);
      }
    });

    itWith(caps, 'listSessions')('lists every odd id exactly as written', async () => {
      for (const id of ODD_IDS) await t.store.checkpoint(id, 1);
      const listed = (await allPages((p) => t.store.sessions(p), 7)).map((s) => s.sessionId);
      expect(listed.slice().sort()).toEqual(ODD_IDS.slice().sort());
    });

    it('keeps odd ids apart through fork, rollback, prune and delete', async () => {
      for (const id of ODD_IDS) {
        await t.store.checkpoint(id, 1);
        await t.store.checkpoint(id, 2);
      }
      await t.store.fork('a:b', { newId: 'a:b:c' });
      await t.store.rollback('a*', 1);
      await t.store.prune('%', { keepLast: 1 });
      await t.store.delete('a');
      expect(await t.store.head('a')).toBeNull();
      expect(await t.store.head('A')).toBe(2);
      expect(await t.store.head('a ')).toBe(2);
      expect(await t.store.head('a*')).toBe(1);
      expect(await t.store.head('*')).toBe(2);
      expect((await t.store.info('%'))?.checkpoints).toBe(1);
      expect((await t.store.info('a%'))?.checkpoints).toBe(2);
      expect((await t.store.info('a:b:'))?.checkpoints).toBe(2);
      expect((await t.store.info('a:b:c'))?.forkedFrom).toEqual({ sessionId: 'a:b', seq: 2 });
    });

    it('keeps odd scopes and keys apart in state', async () => {
      for (const id of ODD_IDS) await t.store.state(id).set(id, id);
      for (const id of ODD_IDS) {
        expect(await t.store.state(id).get(id)).toBe(id);
        for (const other of ['a', 'A', '*', '%']) {
          if (other !== id) expect(await t.store.state(id).get(other)).toBeUndefined();
        }
      }
    });

    describe.each(INVALID_IDS)('an id that is %s', (_, bad) => {
      const calls = CALLS_WITH_ID.filter(([, , optional]) => !(optional && bad === undefined));
      it.each(calls)('is refused by %s with INVALID_ARGUMENT', async (_call, call) => {
        await t.store.checkpoint('exists', 1);
        await expectCkptError(() => call(t.store, bad as never), 'INVALID_ARGUMENT');
        expect(await t.store.head('exists')).toBe(1);
      });
    });
  });

  describe('numbers', () => {
    it.each(BAD_NUMBERS)('refuses seq %s in load, rollback and fork', async (bad) => {
      await t.store.checkpoint('s', 1);
      await expectCkptError(t.store.load('s', bad as number), 'INVALID_ARGUMENT');
      await expectCkptError(t.store.rollback('s', bad as number), 'INVALID_ARGUMENT');
      await expectCkptError(
        t.store.fork('s', { atSeq: bad as number, newId: 'f' }),
        'INVALID_ARGUMENT',
      );
      expect(await t.store.info('f')).toBeNull();
    });

    it.each(BAD_NUMBERS)('refuses beforeSeq %s in list', async (bad) => {
      await t.store.checkpoint('s', 1);
      await expectCkptError(t.store.list('s', { beforeSeq: bad as number }), 'INVALID_ARGUMENT');
    });

    it.each(BAD_NUMBERS.filter((n) => n !== null))('refuses expectedHead %s', async (bad) => {
      await t.store.checkpoint('s', 1);
      await expectCkptError(
        t.store.checkpoint('s', 2, { expectedHead: bad as number }),
        'INVALID_ARGUMENT',
      );
      await expectCkptError(
        t.store.rollback('s', 1, { expectedHead: bad as number }),
        'INVALID_ARGUMENT',
      );
      expect(await t.store.head('s')).toBe(1);
    });

    it.each([...BAD_NUMBERS, undefined])('refuses keepLast %s', async (bad) => {
      await t.store.checkpoint('s', 1);
      await t.store.checkpoint('s', 2);
      await expectCkptError(t.store.prune('s', { keepLast: bad as number }), 'INVALID_ARGUMENT');
      expect((await t.store.info('s'))?.checkpoints).toBe(2);
    });

    it('refuses a missing options object for prune', async () => {
      await expectCkptError(t.store.prune('s', undefined as never), 'INVALID_ARGUMENT');
    });

    it('refuses a misspelt option with INVALID_ARGUMENT naming it, writing nothing', async () => {
      await t.store.checkpoint('s', 1);
      const typo = (options: object) => options as never;
      const calls: [string, () => Promise<unknown>][] = [
        ['expectedhead', () => t.store.checkpoint('s', 2, typo({ expectedhead: 1 }))],
        ['expectedHead', () => t.store.update('s', () => 2, typo({ expectedHead: 1 }))],
        ['expected', () => t.store.rollback('s', 1, typo({ expected: 1 }))],
        ['at', () => t.store.fork('s', typo({ at: 1 }))],
        ['keep', () => t.store.prune('s', typo({ keepLast: 1, keep: 1 }))],
        ['size', () => t.store.list('s', typo({ size: 10 }))],
        ['size', () => t.store.transcript('s', typo({ size: 10 }))],
        ['prefx', () => t.store.sessions(typo({ prefx: 'a' }))],
        ['start', () => t.store.state('x').keys(typo({ start: 'a' }))],
      ];
      for (const [option, call] of calls) {
        const err = await expectCkptError(call(), 'INVALID_ARGUMENT');
        expect(err.message).toContain(JSON.stringify(option));
      }
      expect(await t.store.history('s')).toEqual([1]);
      expect((await t.store.info('s'))?.checkpoints).toBe(1);
      expect(await t.store.head('x')).toBeNull();
      // An option set to undefined is as good as absent.
      await t.store.checkpoint('s', 2, typo({ metadata: undefined, somethingElse: undefined }));
      expect(await t.store.history('s')).toEqual([1, 2]);
    });

    it('names the refused argument in the error', async () => {
      const err = await expectCkptError(t.store.rollback('s', -3), 'INVALID_ARGUMENT');
      expect(err.message).toContain('seq');
      expect(err.details.argument).toBe('seq');
    });
  });
}
