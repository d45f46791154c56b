/**
 * Round-trip counting for server backends that promise one statement per operation: count
 * the calls of the driver method every statement goes through, and check each operation.
 */
import type { CheckpointStore } from '@ckpt/core';
import { expect } from 'vitest';

/** A counter of calls to one method, or to several together. */
export interface CallCounter {
  reset(): void;
  readonly count: number;
}

/**
 * Count the calls of `target[method]` (of each method, when given several: a driver that
 * sends statements two ways) from now on, those `which` accepts; the methods keep working.
 */
export function countCalls(
  target: object,
  method: string | string[],
  which: (...args: unknown[]) => boolean = () => true,
): CallCounter {
  const holder = target as Record<string, (...args: unknown[]) => unknown>;
  let count = 0;
  for (const name of typeof method === 'string' ? [method] : method) {
    const original = holder[name]!.bind(target);
    holder[name] = (...args: unknown[]) => {
      if (which(...args)) count++;
      return original(...args);
    };
  }
  return {
    reset() {
      count = 0;
    },
    get count() {
      return count;
    },
  };
}

/**
 * Run every kind of store operation once on a fresh store and expect each to send exactly one
 * statement through `counter` (the store's backend must already be migrated).
 */
export async function expectOneStatementPerOperation(
  store: CheckpointStore,
  counter: CallCounter,
): Promise<void> {
  const operations: [string, () => Promise<unknown>][] = [
    ['checkpoint (new session)', () => store.checkpoint('s', 1, { transcript: ['a'] })],
    ['checkpoint', () => store.checkpoint('s', 2, { metadata: { m: 1 } })],
    [
      'checkpoint with expectedHead and key',
      () => store.checkpoint('s', 3, { expectedHead: 2, idempotencyKey: 'k' }),
    ],
    ['idempotent retry', () => store.checkpoint('s', 3, { idempotencyKey: 'k' })],
    ['load', () => store.load('s')],
    ['load seq', () => store.load('s', 1)],
    ['info', () => store.info('s')],
    ['history', () => store.history('s')],
    ['list', () => store.list('s')],
    ['transcript', () => store.transcript('s')],
    ['rollback', () => store.rollback('s', 1)],
    ['fork', () => store.fork('s', { newId: 'f' })],
    ['prune', () => store.prune('s', { keepLast: 1 })],
    ['sessions', () => store.sessions()],
    ['delete', () => store.delete('f')],
    ['state set', () => store.state('x').set('k', 1)],
    ['state get', () => store.state('x').get('k')],
    ['state keys', () => store.state('x').keys()],
    ['state delete', () => store.state('x').delete('k')],
  ];
  for (const [what, op] of operations) {
    counter.reset();
    await op();
    expect(counter.count, `statements sent by ${what}`).toBe(1);
  }
}
