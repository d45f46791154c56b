import { memory, memoryKv } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';
import { CheckpointStore, isCkptError, kvBackend } from '../src/index.js';

describe('CheckpointStore', () => {
  it('refuses to be built without a backend, saying what to pass', () => {
    let err: unknown;
    try {
      new CheckpointStore(undefined as never);
    } catch (e) {
      err = e;
    }
    expect(isCkptError(err, 'INVALID_ARGUMENT')).toBe(true);
    expect((err as Error).message).toMatch(/memory\(\)/);
  });

  it('names the method whose options have an option it does not know', async () => {
    const store = new CheckpointStore(memory());
    await store.checkpoint('s', 1);
    const typo = (options: object) => options as never;
    const calls: [string, () => unknown][] = [
      ['new CheckpointStore() options', () => new CheckpointStore(memory(), typo({ codec: [] }))],
      ['checkpoint() options', () => store.checkpoint('s', 2, typo({ expectedhead: 1 }))],
      ['update() options', () => store.update('s', () => 2, typo({ expectedHead: 1 }))],
      ['rollback() options', () => store.rollback('s', 1, typo({ expected: 1 }))],
      ['fork() options', () => store.fork('s', typo({ at: 1 }))],
      ['prune() options', () => store.prune('s', typo({ keep: 1 }))],
      ['pin() options', () => store.pin('s', 1, typo({ notes: 'x' }))],
      ['sweep() options', () => store.sweep(typo({ idle: 1 }))],
      ['reencode() options', () => store.reencode(typo({ signals: null }))],
      ['list() page', () => store.list('s', typo({ size: 10 }))],
      ['sessions() page', () => store.sessions(typo({ prefx: 'a' }))],
      ['keys() page', () => store.state('x').keys(typo({ start: 'a' }))],
    ];
    for (const [whose, call] of calls) {
      const err = await Promise.resolve()
        .then(call)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(isCkptError(err, 'INVALID_ARGUMENT'), whose).toBe(true);
      expect((err as Error).message).toContain(`${whose} has no option "`);
    }
  });

  it('bounds the cost of a transcript page when few checkpoints carry items', async () => {
    const store = new CheckpointStore(memory());
    await store.checkpoint('s', 0, { transcript: ['the only item'] });
    for (let i = 1; i <= 1500; i++) await store.checkpoint('s', i);
    const first = await store.transcript('s', { limit: 10 });
    // The walk stops after its budget of checkpoints and hands back a cursor to go on.
    expect(first.items).toEqual([]);
    expect(first.cursor).not.toBeNull();
    const second = await store.transcript('s', { limit: 10, cursor: first.cursor });
    expect(second.items.map((e) => e.item)).toEqual(['the only item']);
    expect(second.cursor).toBeNull();
  });

  it.each([
    ['memory', () => memory()],
    ['kvBackend', () => kvBackend(memoryKv())],
  ])('writes a state value only where the key has none with setIfAbsent (%s)', async (_, make) => {
    const state = new CheckpointStore(make()).state('prefs');
    expect(await state.setIfAbsent('theme', 'dark')).toBe(true);
    expect(await state.setIfAbsent('theme', 'light')).toBe(false);
    expect(await state.get('theme')).toBe('dark');
    await state.delete('theme');
    expect(await state.setIfAbsent('theme', { mode: 'light' })).toBe(true);
    expect(await state.get('theme')).toEqual({ mode: 'light' });
  });

  it('refuses a bad key or value in setIfAbsent before writing anything', async () => {
    const state = new CheckpointStore(memory()).state('prefs');
    await expect(state.setIfAbsent('', 1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(state.setIfAbsent('k', Number.NaN)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    expect(await state.get('k')).toBeUndefined();
  });

  it('closes its backend once', async () => {
    let closed = 0;
    const backend = Object.assign(Object.create(memory()), { close: async () => void closed++ });
    const store = new CheckpointStore(backend);
    await store.close();
    await store.close();
    expect(closed).toBe(1);
  });

  it('closes its backend only after the calls in flight settle, failed ones included', async () => {
    const events: string[] = [];
    let fail: (err: Error) => void = () => {};
    let succeed: () => void = () => {};
    const backend = Object.assign(Object.create(memory()), {
      load: () =>
        new Promise((_, reject) => {
          fail = reject;
        }),
      session: () =>
        new Promise((resolve) => {
          succeed = () => {
            events.push('info answered');
            resolve(null);
          };
        }),
      close: async () => void events.push('backend closed'),
    });
    const store = new CheckpointStore(backend);
    const failing = store.load('s').catch((err) => events.push(`load ${err.code}`));
    const passing = store.info('s').then((info) => events.push(`info ${info}`));
    const closing = store.close().then(() => events.push('store closed'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(events).toEqual([]);
    fail(new Error('connection reset'));
    await failing;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(events).toEqual(['load BACKEND']);
    succeed();
    await Promise.all([passing, closing]);
    expect(events).toContain('info null');
    expect(events.filter((e) => e !== 'info null')).toEqual([
      'load BACKEND',
      'info answered',
      'backend closed',
      'store closed',
    ]);
  });
});

describe('state().update() when its compare-and-set keeps failing', () => {
  /** A memory backend whose compare-and-set of a state value first does `meanwhile`, then fails. */
  const failingCompares = (meanwhile: (backend: ReturnType<typeof memory>) => Promise<void>) => {
    const inner = memory();
    const compareAndSet = async () => {
      await meanwhile(inner);
      return false;
    };
    return new Proxy(inner, {
      get: (target, name) => {
        if (name === 'stateCompareAndSet') return compareAndSet;
        const value = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };

  it('says it lost races when other writers changed the value each time', async () => {
    let n = 0;
    const store = new CheckpointStore(
      failingCompares((inner) => inner.stateSet('s', 'k', JSON.stringify(++n))),
    );
    const err = await store
      .state('s')
      .update('k', () => 0)
      .catch((e) => e);
    expect(isCkptError(err, 'CONFLICT')).toBe(true);
    expect(err.message).toBe(
      'state update of "k" lost 100 races in a row to other writers of that key; retry later.',
    );
  });

  it('says retrying will not help when nothing changed the value it compared', async () => {
    const store = new CheckpointStore(failingCompares(async () => {}));
    await store.state('s').set('k', 1);
    const err = await store
      .state('s')
      .update('k', (n) => (n as number) + 1)
      .catch((e) => e);
    expect(isCkptError(err, 'BACKEND')).toBe(true);
    expect(err.message).toMatch(
      /^state update of "k" failed: the memory backend's compare-and-set did not match the value it had just read, 100 times, and nothing changed that value in between, so retrying will not help\./,
    );
    expect(err.message).not.toMatch(/retry later/);
    expect(await store.state('s').get('k')).toBe(1);
  });
});
