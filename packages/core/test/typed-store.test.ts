/**
 * A store typed with the application's own state: what TypeScript takes and refuses, and what
 * it says a read returns. The `expectTypeOf` and `@ts-expect-error` lines are checked by
 * `pnpm typecheck`; each test also runs, so that what the types promise is what happens.
 */
import {
  type Checkpoint,
  CheckpointStore,
  isCkptError,
  type JsonCompatible,
  type JsonValue,
  kvBackend,
  type StateScope,
} from '@ckpt/core';
import { describe, expect, expectTypeOf, it } from 'vitest';

/** A session's state as an application declares it: an interface, without an index signature. */
interface ChatState {
  step: number;
  messages: Message[];
  /** Optional, so it may be undefined: dropped when stored, as JSON.stringify drops it. */
  title?: string;
  mode: 'chat' | 'tool';
}

interface Message {
  role: 'user' | 'assistant';
  text: string;
}

/** Not JSON: a Date does not come back as a Date. */
interface Stamped {
  step: number;
  at: Date;
}

const state: ChatState = {
  step: 1,
  messages: [{ role: 'user', text: 'hi' }],
  mode: 'chat',
};

function memoryStore<T = JsonValue>(): CheckpointStore<T> {
  const map = new Map<string, string>();
  return new CheckpointStore<T>(
    kvBackend({
      get: async (key) => map.get(key),
      set: async (key, value) => {
        map.set(key, value);
      },
      delete: async (key) => map.delete(key),
      compareAndSet: async (key, expected, value) => {
        if ((map.get(key) ?? null) !== expected) return false;
        map.set(key, value);
        return true;
      },
    }),
  );
}

async function refusal(call: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await call();
  } catch (err) {
    if (isCkptError(err, 'INVALID_ARGUMENT')) return err.details.argument;
    throw err;
  }
  return undefined;
}

describe('a store typed with the application state', () => {
  it('takes state declared as an interface and returns it typed', async () => {
    const store = memoryStore<ChatState>();
    const written = await store.checkpoint('chat', state);
    expectTypeOf(written).toEqualTypeOf<Checkpoint<ChatState>>();
    const loaded = await store.load('chat');
    expectTypeOf(loaded).toEqualTypeOf<Checkpoint<ChatState> | null>();
    expect(loaded?.data.messages[0]?.text).toBe('hi');
  });

  it('checks an object literal against the declared state', async () => {
    const store = memoryStore<ChatState>();
    // @ts-expect-error: messages and mode are missing
    await store.checkpoint('chat', { step: 1 });
    // @ts-expect-error: ChatState has no property extra
    await store.checkpoint('chat', { ...state, extra: true });
    // @ts-expect-error: 'robot' is not a role
    await store.checkpoint('chat', { ...state, messages: [{ role: 'robot', text: '' }] });
    expect(await store.history('chat')).toHaveLength(3);
  });

  it('refuses a Date field as a type error, and at run time with INVALID_ARGUMENT as before', async () => {
    const store = memoryStore();
    const stamped: Stamped = { step: 1, at: new Date() };
    // @ts-expect-error: a Date is not JSON
    const refused = refusal(() => store.checkpoint('chat', stamped));
    expect(await refused).toBe('data.at');
    const typed = memoryStore<Stamped>();
    // @ts-expect-error: a store declared with a Date field takes no value of it
    expect(await refusal(() => typed.checkpoint('chat', stamped))).toBe('data.at');
  });

  it('types load(), update() and loadByKey() of the same store alike', async () => {
    const store = memoryStore<ChatState>();
    await store.checkpoint('chat', state, { idempotencyKey: 'k' });
    const next = await store.update('chat', (current) => {
      expectTypeOf(current).toEqualTypeOf<Checkpoint<ChatState> | null>();
      return { ...state, step: (current?.data.step ?? 0) + 1 };
    });
    expectTypeOf(next).toEqualTypeOf<Checkpoint<ChatState>>();
    expect(next.data.step).toBe(2);
    expectTypeOf(await store.loadByKey('chat', 'k')).toEqualTypeOf<Checkpoint<ChatState> | null>();
    // @ts-expect-error: update's function must return a ChatState
    await expect(store.update('chat', () => ({ step: 3 }))).resolves.toBeDefined();
  });
});

describe('an untyped store (CheckpointStore, as openStore returns it)', () => {
  it('takes an interface value and returns a checkpoint of its type', async () => {
    const store = memoryStore();
    expectTypeOf(store).toEqualTypeOf<CheckpointStore>();
    const written = await store.checkpoint('chat', state);
    expectTypeOf(written).toEqualTypeOf<Checkpoint<ChatState>>();
    expect(written.data).toEqual(state);
  });

  it('reads typed with load<T>() and writes typed with checkpoint<T>() and update<T>()', async () => {
    const store = memoryStore();
    await store.checkpoint<ChatState>('chat', state);
    // @ts-expect-error: the call names ChatState, which needs messages and mode
    await store.checkpoint<ChatState>('other', { step: 1 });
    const loaded = await store.load<ChatState>('chat');
    expectTypeOf(loaded).toEqualTypeOf<Checkpoint<ChatState> | null>();
    const updated = await store.update<ChatState>('chat', (current) => ({
      ...state,
      step: (current?.data.step ?? 0) + 1,
    }));
    expect(updated.data.step).toBe(2);
    expectTypeOf(await store.load('chat')).toEqualTypeOf<Checkpoint<JsonValue> | null>();
  });

  it('still takes plain JSON values, and any', async () => {
    const store = memoryStore();
    expectTypeOf((await store.checkpoint('a', 1)).data).toEqualTypeOf<number>();
    const json = JSON.parse('{"a":[1,"x",null]}') as JsonValue;
    expectTypeOf((await store.checkpoint('a', json)).data).toEqualTypeOf<JsonValue>();
    const parsed = JSON.parse('{"b":true}');
    expectTypeOf(parsed).toBeAny();
    await store.checkpoint('a', parsed);
    expect(await store.history('a')).toEqual([1, 2, 3]);
  });

  it('takes transcript items declared as an interface', async () => {
    const store = memoryStore();
    const messages: Message[] = [{ role: 'user', text: 'hi' }];
    await store.checkpoint('chat', state, { transcript: messages });
    // Naming one type of a call leaves the others at their defaults: name the items' type too.
    await store.update<ChatState, Message>('chat', () => state, { transcript: messages });
    const stamped: Stamped[] = [{ step: 1, at: new Date() }];
    // @ts-expect-error: a transcript item with a Date is not JSON
    expect(await refusal(() => store.checkpoint('chat', 1, { transcript: stamped }))).toBe(
      'transcript[0].at',
    );
    expect((await store.transcript('chat')).items).toHaveLength(2);
  });

  it('is the same type as a typed store, both ways', () => {
    const typed = memoryStore<ChatState>();
    const untyped: CheckpointStore = typed;
    const retyped: CheckpointStore<ChatState> = untyped;
    expect(retyped).toBe(typed);
  });
});

describe('typed state scopes', () => {
  it('gets, sets and updates values of the declared type', async () => {
    const scope = memoryStore().state<ChatState>('drafts');
    expectTypeOf(scope).toEqualTypeOf<StateScope<ChatState>>();
    await scope.set('d1', state);
    expectTypeOf(await scope.get('d1')).toEqualTypeOf<ChatState | undefined>();
    const next = await scope.update('d1', (current) => ({
      ...state,
      step: (current?.step ?? 0) + 1,
    }));
    expectTypeOf(next).toEqualTypeOf<ChatState>();
    expect(next.step).toBe(2);
    // @ts-expect-error: the scope holds ChatState values
    await scope.set('d2', { step: 1 });
    expect(await scope.setIfAbsent('d3', state)).toBe(true);
    // @ts-expect-error: setIfAbsent takes a ChatState too
    await scope.setIfAbsent('d4', { step: 1 });
  });

  it('takes an interface value in an untyped scope, and refuses a Date there', async () => {
    const scope = memoryStore().state('drafts');
    await scope.set('d1', state);
    expectTypeOf(await scope.get('d1')).toEqualTypeOf<JsonValue | undefined>();
    const stamped: Stamped = { step: 1, at: new Date() };
    // @ts-expect-error: a Date is not JSON
    expect(await refusal(() => scope.set('d2', stamped))).toBe('value.at');
  });
});

describe('JsonCompatible', () => {
  it('keeps a JSON type as it is and maps what JSON cannot carry to never', () => {
    expectTypeOf<JsonCompatible<ChatState>>().toEqualTypeOf<{
      step: number;
      messages: { role: 'user' | 'assistant'; text: string }[];
      title?: string | undefined;
      mode: 'chat' | 'tool';
    }>();
    expectTypeOf<JsonCompatible<JsonValue>>().toEqualTypeOf<JsonValue>();
    expectTypeOf<JsonCompatible<Stamped>['at']>().toBeNever();
    expectTypeOf<JsonCompatible<{ f: () => void }>['f']>().toBeNever();
    expectTypeOf<JsonCompatible<{ n: bigint }>['n']>().toBeNever();
    expectTypeOf<JsonCompatible<{ s: symbol }>['s']>().toBeNever();
    expectTypeOf<JsonCompatible<{ m: Map<string, number> }>['m']>().toBeNever();
    expectTypeOf<JsonCompatible<{ s: Set<string> }>['s']>().toBeNever();
    expectTypeOf<JsonCompatible<undefined>>().toBeNever();
    expectTypeOf<JsonCompatible<unknown>>().toBeNever();
    expectTypeOf<JsonCompatible<(string | undefined)[]>>().toEqualTypeOf<string[]>();
    expectTypeOf<JsonCompatible<{ o?: number }>>().toEqualTypeOf<{ o?: number | undefined }>();
  });
});
