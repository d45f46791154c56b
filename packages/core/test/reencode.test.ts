/**
 * What reencode() tells onProgress: the sessions of the pass under way (never the sum of the
 * passes), the values rewritten in all, and, when it is stopped, every value it rewrote.
 */
import { memory } from '@ckpt/memory';
import { expect, it } from 'vitest';
import {
  type CheckpointBackend,
  CheckpointStore,
  encrypt,
  type ReencodeProgress,
} from '../src/index.js';

const KEY = { k1: new Uint8Array(32).fill(1) };

/** A memory backend with `sessions` plain sessions of `checkpoints` checkpoints each, and 3 state values. */
async function plainBackend(sessions: number, checkpoints: number) {
  const backend = memory();
  const plain = new CheckpointStore(backend);
  for (let i = 0; i < sessions; i++) {
    for (let seq = 1; seq <= checkpoints; seq++) await plain.checkpoint(`s-${i}`, { i, seq });
  }
  for (const key of ['a', 'b', 'c']) await plain.state('prefs').set(key, key);
  return backend;
}

/** `backend`, with `after` called once each checkpoint rewrite has been made, before it resolves. */
function afterRewrites(backend: CheckpointBackend, after: (rewritten: number) => void) {
  let rewritten = 0;
  return new Proxy(backend, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property !== 'rewriteCheckpoint') {
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (...args: unknown[]) => {
        const done = await (value as (...a: unknown[]) => Promise<boolean>).apply(target, args);
        if (done) after(++rewritten);
        return done;
      };
    },
  });
}

it("counts the sessions of each pass, not the passes' sum, and the values rewritten in all", async () => {
  const store = new CheckpointStore(await plainBackend(31, 2), {
    codecs: [encrypt({ keys: KEY, current: 'k1' })],
  });
  const seen: ReencodeProgress[] = [];
  const result = await store.reencode({ onProgress: (p) => seen.push(p) });
  expect(result).toEqual({ checkpoints: 62, state: 3 });
  // The first pass rewrote everything; the second walks the 31 sessions again, rewriting nothing.
  expect(seen.filter((p) => p.pass === 1).at(-1)).toEqual({
    pass: 1,
    sessions: 31,
    checkpoints: 62,
    state: 0,
  });
  expect(seen.at(-1)).toEqual({ pass: 2, sessions: 31, checkpoints: 62, state: 3 });
  for (const p of seen) expect(p.sessions).toBeLessThanOrEqual(31);
  expect(seen.map((p) => p.pass)).toEqual([...seen.map((p) => p.pass)].sort());

  const again: ReencodeProgress[] = [];
  expect(await store.reencode({ onProgress: (p) => again.push(p) })).toEqual({
    checkpoints: 0,
    state: 0,
  });
  expect(again.at(-1)).toEqual({ pass: 1, sessions: 31, checkpoints: 0, state: 0 });
});

it('tells onProgress, once stopped, of every value it rewrote, the one finished after the abort too', async () => {
  const backend = await plainBackend(40, 3);
  const controller = new AbortController();
  let rewritten = 0;
  const store = new CheckpointStore(
    afterRewrites(backend, (n) => {
      rewritten = n;
      // Mid-page, with a rewrite made and not yet answered: it stays made.
      if (n === 20) controller.abort(new Error('stop'));
    }),
    { codecs: [encrypt({ keys: KEY, current: 'k1' })] },
  );
  let last: ReencodeProgress | undefined;
  await expect(
    store.reencode({ signal: controller.signal, onProgress: (p) => (last = p) }),
  ).rejects.toThrow('stop');
  expect(rewritten).toBe(20);
  expect(last).toEqual({ pass: 1, sessions: 6, checkpoints: 20, state: 0 });

  // The rest, on a second call: the two counts add up to every checkpoint.
  const rest = await store.reencode();
  expect(rest).toEqual({ checkpoints: 40 * 3 - 20, state: 3 });
});
