/** exportSession, importSession and stateScopes: sessions and state moved exactly. */
import type {
  BackendCapabilities,
  CheckpointStore,
  ExportedCheckpoint,
  JsonValue,
  SessionExport,
  SessionImport,
} from '@ckpt/core';
import { describe, expect, it } from 'vitest';
import { itWith } from '../gate.js';
import type { ContractContext } from '../harness.js';
import { sessionReads, stateReads } from '../session-reads.js';
import {
  allPages,
  checkpointToImport,
  expectCkptError,
  ODD_IDS,
  sessionToImport,
  settleAll,
  sleep,
} from '../util.js';

/** Every checkpoint of an export, read into an array. */
async function whole(
  exported: SessionExport | null,
): Promise<SessionImport & { checkpoints: ExportedCheckpoint[] }> {
  if (exported === null) throw new Error('expected a session to export');
  const checkpoints: ExportedCheckpoint[] = [];
  for await (const cp of exported.checkpoints) checkpoints.push(cp);
  return { ...exported, checkpoints };
}

/** An object whose own keys are `__proto__` (as plain data) and a non-ASCII one. */
const odd = () => JSON.parse('{"__proto__":"kept","é":null}') as JsonValue;

/**
 * A session with all there is to carry: a branch after a rollback, pruned checkpoints, a
 * parent that is no longer stored, transcripts, metadata, values with odd keys, and the head
 * off the newest branch.
 */
async function rich(store: CheckpointStore, id: string): Promise<void> {
  for (let step = 1; step <= 6; step++) {
    await store.checkpoint(
      id,
      { step, z: 1, a: [step, odd()], '': 'empty key' },
      {
        metadata: { step, tag: `t${step}` },
        transcript: step % 2 ? [`item ${step}`, { step }] : [],
      },
    );
  }
  await store.rollback(id, 3);
  await store.checkpoint(id, { branch: true }, { transcript: ['branch'] });
  await store.prune(id, { keepLast: 4 });
  await store.rollback(id, 5);
}

/** Export `id`, delete it, import it back; expect every read as it was. */
async function expectRoundTrip(store: CheckpointStore, id: string): Promise<void> {
  const before = await sessionReads(store, id);
  const exported = await whole(await store.exportSession(id));
  expect(await store.delete(id)).toBe(true);
  expect(await store.importSession(exported)).toBe('imported');
  expect(await sessionReads(store, id)).toEqual(before);
}

/** Moving sessions and state between stores. */
export function transferCases(t: ContractContext, caps: BackendCapabilities): void {
  const itListing = itWith(caps, 'listStateKeys');
  const itSessions = itWith(caps, 'listSessions');
  const itConcurrent = itWith(caps, 'concurrentWriters');

  describe('export and import', () => {
    it('exports every stored checkpoint on every branch, seq ascending, with its transcript items', async () => {
      await rich(t.store, 's');
      const exported = await whole(await t.store.exportSession('s'));
      const info = await t.store.info('s');
      expect(exported).toMatchObject({
        sessionId: 's',
        head: 5,
        forkedFrom: null,
        createdAt: info!.createdAt,
        updatedAt: info!.updatedAt,
        count: 4,
      });
      expect(exported.checkpoints.map((cp) => [cp.seq, cp.parent])).toEqual([
        [4, 3],
        [5, 4],
        [6, 5],
        [7, 3],
      ]);
      const five = exported.checkpoints[1]!;
      expect(five).toEqual({
        seq: 5,
        parent: 4,
        data: { step: 5, z: 1, a: [5, odd()], '': 'empty key' },
        metadata: { step: 5, tag: 't5' },
        transcript: ['item 5', { step: 5 }],
        createdAt: (await t.store.load('s', 5))!.createdAt,
      });
      expect(Object.keys(five.data as object)).toEqual(['step', 'z', 'a', '']);
      expect(exported.checkpoints[3]!.transcript).toEqual(['branch']);
      expect(exported.checkpoints[0]!.transcript).toEqual([]);
    });

    it('gives null for a session that does not exist', async () => {
      expect(await t.store.exportSession('nobody')).toBeNull();
    });

    it('imports a session so that every read answers as before: load of each seq, history, list, transcript, info', async () => {
      await rich(t.store, 's');
      await expectRoundTrip(t.store, 's');
    });

    it('keeps forkedFrom and the times of a fork through a round trip', async () => {
      await rich(t.store, 's');
      await sleep(5);
      await t.store.fork('s', { atSeq: 4, newId: 'f' });
      await t.store.checkpoint('f', 'after the fork');
      await expectRoundTrip(t.store, 'f');
      expect((await t.store.info('f'))?.forkedFrom).toEqual({ sessionId: 's', seq: 4 });
    });

    it('round-trips sessions with odd ids', async () => {
      for (const id of ODD_IDS) await t.store.checkpoint(id, { id }, { transcript: [id] });
      for (const id of ODD_IDS) await expectRoundTrip(t.store, id);
    });

    it('exports a session longer than one page in order', async () => {
      for (let i = 1; i <= 150; i++) await t.store.checkpoint('long', i, { transcript: [i] });
      const exported = await whole(await t.store.exportSession('long'));
      expect(exported.checkpoints.map((cp) => cp.data)).toEqual(
        Array.from({ length: 150 }, (_, i) => i + 1),
      );
      await t.store.delete('long');
      await t.store.importSession(exported);
      expect((await t.store.transcript('long', { limit: 1000 })).items.map((e) => e.item)).toEqual(
        Array.from({ length: 150 }, (_, i) => 150 - i),
      );
    });

    it('fails an export whose session was written while it was read, with CONFLICT', async () => {
      await t.store.checkpoint('s', 1);
      const exported = await t.store.exportSession('s');
      await t.store.checkpoint('s', 2);
      await expectCkptError(whole(exported), 'CONFLICT');
    });

    it('goes on after an import with seq one above the highest, and the head as parent', async () => {
      await rich(t.store, 's');
      await expectRoundTrip(t.store, 's');
      const next = await t.store.checkpoint('s', 'next');
      expect([next.seq, next.parent]).toEqual([8, 5]);
      expect(await t.store.history('s')).toEqual([4, 5, 8]);
    });

    it('takes checkpoints in any order, as an array', async () => {
      await rich(t.store, 's');
      const before = await sessionReads(t.store, 's');
      const exported = await whole(await t.store.exportSession('s'));
      await t.store.delete('s');
      await t.store.importSession({
        ...exported,
        checkpoints: [...exported.checkpoints].reverse(),
      });
      expect(await sessionReads(t.store, 's')).toEqual(before);
    });

    it('refuses an existing id with CONFLICT, writing nothing; skip leaves it; replace overwrites it whole', async () => {
      await rich(t.store, 's');
      const exported = await whole(await t.store.exportSession('s'));
      await t.store.delete('s');
      await t.store.checkpoint('s', 'other', { idempotencyKey: 'k' });
      await t.store.checkpoint('s', 'other 2');
      await t.store.checkpoint('s', 'other 3');
      const other = await sessionReads(t.store, 's');
      await expectCkptError(t.store.importSession(exported), 'CONFLICT');
      expect(await sessionReads(t.store, 's')).toEqual(other);
      expect(await t.store.importSession(exported, { ifExists: 'skip' })).toBe('skipped');
      expect(await sessionReads(t.store, 's')).toEqual(other);
      expect(await t.store.importSession(exported, { ifExists: 'replace' })).toBe('imported');
      expect((await t.store.info('s'))?.checkpoints).toBe(4);
      // Nothing of what it replaced is left: not seq 1 or 2, nor the idempotency key.
      expect(await t.store.load('s', 1)).toBeNull();
      expect(await t.store.load('s', 2)).toBeNull();
      expect(await t.store.loadByKey('s', 'k')).toBeNull();
      const again = await t.store.checkpoint('s', 'keyed again', { idempotencyKey: 'k' });
      expect(again.seq).toBe(8);
    });

    it('is safe to retry: a second import with skip changes nothing', async () => {
      await rich(t.store, 's');
      const exported = await whole(await t.store.exportSession('s'));
      await t.store.delete('s');
      await t.store.importSession(exported, { ifExists: 'skip' });
      const first = await sessionReads(t.store, 's');
      expect(await t.store.importSession(exported, { ifExists: 'skip' })).toBe('skipped');
      expect(await sessionReads(t.store, 's')).toEqual(first);
    });

    itConcurrent('lets exactly one of several concurrent imports of one id store it', async () => {
      await rich(t.store, 's');
      const exported = await whole(await t.store.exportSession('s'));
      const before = await sessionReads(t.store, 's');
      await t.store.delete('s');
      const stores = [t.store, await t.connect(), await t.connect()];
      const outcomes = await settleAll(6, (i) => stores[i % 3]!.importSession(exported));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      for (const o of outcomes) {
        if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'CONFLICT' });
      }
      expect(await sessionReads(t.store, 's')).toEqual(before);
    });

    it('round-trips a checkpoint at the payload limit', async () => {
      const limit = 64 * 1024;
      const store = t.storeWith({ maxPayloadBytes: limit });
      // data "xxx…" (2 quotes) + metadata {} (not counted) + no items: exactly the limit.
      await store.checkpoint('big', 'x'.repeat(limit - 2));
      await expectRoundTrip(store, 'big');
    });

    describe('refuses a bad session with INVALID_ARGUMENT or PAYLOAD_TOO_LARGE, writing nothing', () => {
      const good = (): SessionImport =>
        sessionToImport('bad', [
          checkpointToImport(1),
          checkpointToImport(2, { transcript: ['x'] }),
        ]);
      const cases: [
        string,
        (s: SessionImport & { checkpoints: ExportedCheckpoint[] }) => unknown,
        string,
        string,
      ][] = [
        [
          'a function in data',
          (s) => {
            s.checkpoints[1]!.data = (() => 1) as never;
          },
          'INVALID_ARGUMENT',
          'session.checkpoints[1].data',
        ],
        [
          'NaN in metadata',
          (s) => {
            s.checkpoints[0]!.metadata = { n: Number.NaN };
          },
          'INVALID_ARGUMENT',
          'session.checkpoints[0].metadata.n',
        ],
        [
          'a transcript that is not an array',
          (s) => {
            s.checkpoints[0]!.transcript = 'x' as never;
          },
          'INVALID_ARGUMENT',
          'session.checkpoints[0].transcript',
        ],
        [
          'a head that is not stored',
          (s) => {
            s.head = 3;
          },
          'INVALID_ARGUMENT',
          'session.head',
        ],
        [
          'a seq twice',
          (s) => {
            s.checkpoints[1]!.seq = 1;
            s.checkpoints[1]!.parent = null;
            s.head = 1;
          },
          'INVALID_ARGUMENT',
          'session.checkpoints',
        ],
        [
          'a parent not below its seq',
          (s) => {
            s.checkpoints[0]!.parent = 2;
          },
          'INVALID_ARGUMENT',
          'session.checkpoints[0].parent',
        ],
        [
          'a seq of 0',
          (s) => {
            s.checkpoints[0]!.seq = 0;
          },
          'INVALID_ARGUMENT',
          'session.checkpoints[0].seq',
        ],
        [
          'no checkpoints',
          (s) => {
            s.checkpoints = [];
          },
          'INVALID_ARGUMENT',
          'session.checkpoints',
        ],
        [
          'an invalid date',
          (s) => {
            s.updatedAt = new Date(Number.NaN);
          },
          'INVALID_ARGUMENT',
          'session.updatedAt',
        ],
        [
          'a bad id',
          (s) => {
            s.sessionId = 'a\0b';
          },
          'INVALID_ARGUMENT',
          'session.sessionId',
        ],
        [
          'a bad forkedFrom',
          (s) => {
            s.forkedFrom = { sessionId: 'x', seq: -1 };
          },
          'INVALID_ARGUMENT',
          'session.forkedFrom.seq',
        ],
        [
          'a payload too large',
          (s) => {
            s.checkpoints[0]!.data = 'x'.repeat(9 * 1024 * 1024);
          },
          'PAYLOAD_TOO_LARGE',
          '',
        ],
      ];
      for (const [what, spoil, code, argument] of cases) {
        it(`with ${what}`, async () => {
          const session = good() as SessionImport & { checkpoints: ExportedCheckpoint[] };
          spoil(session);
          const err = await expectCkptError(t.store.importSession(session), code as never);
          if (argument) expect(err.details.argument).toBe(argument);
          if (session.sessionId === 'bad') expect(await t.store.info('bad')).toBeNull();
        });
      }
      it('with an unknown ifExists', async () => {
        await expectCkptError(
          t.store.importSession(good(), { ifExists: 'merge' as never }),
          'INVALID_ARGUMENT',
        );
        expect(await t.store.info('bad')).toBeNull();
      });
    });

    itSessions('keeps the order of sessions(): each session keeps its updatedAt', async () => {
      for (const id of ['a', 'b', 'c', 'd']) {
        await t.store.checkpoint(id, id);
        await sleep(3);
      }
      await t.store.rollback('b', 1);
      const order = await allPages((page) => t.store.sessions(page), 2);
      const exported = [];
      for (const s of order) exported.push(await whole(await t.store.exportSession(s.sessionId)));
      for (const s of order) await t.store.delete(s.sessionId);
      // Imported in the reverse order, now: the listing goes by the times carried.
      for (const e of exported.reverse()) await t.store.importSession(e);
      expect(await allPages((page) => t.store.sessions(page), 2)).toEqual(order);
    });
  });

  describe('state scopes', () => {
    itListing('lists the scopes that hold a key, ascending by UTF-8 bytes, in pages', async () => {
      const scopes = ['b', 'a', '\u{1F99C}', '\uFFFF', 'a:b', '%', 'A', 'a b', '__proto__'];
      for (const scope of scopes) await t.store.state(scope).set('k', scope);
      await t.store.state('emptied').set('k', 1);
      await t.store.state('emptied').delete('k');
      const listed = await allPages((page) => t.store.stateScopes(page), 2);
      expect(listed).toEqual(
        [...scopes].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))),
      );
      const reads = await stateReads(t.store);
      expect(reads.map(([scope]) => scope)).toEqual(listed);
      expect(reads.find(([scope]) => scope === '__proto__')?.[1]).toEqual([['k', '__proto__']]);
    });

    itListing('refuses a cursor of another listing with INVALID_ARGUMENT', async () => {
      await t.store.state('a').set('k', 1);
      await t.store.state('a').set('l', 1);
      const { cursor } = await t.store.state('a').keys({ limit: 1 });
      await expectCkptError(t.store.stateScopes({ cursor }), 'INVALID_ARGUMENT');
    });
  });
}
