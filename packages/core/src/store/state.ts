/** `StateScope`: a small JSON key-value space beside the checkpoints. */
import type { CompleteBackend } from '../adapter/backend.js';
import { type CodecChain, parseValue } from '../codecs/chain.js';
import { checkPayloadSize, type Encoded, encodedSize, encodeJson } from '../values/encode.js';
import { CkptError, invalidArgument, unsupported } from '../values/errors.js';
import { checkName, checkOptions, describe } from '../values/validate.js';
import { type CursorOwner, readPage, toPage } from './paging.js';
import type { Page, PageOptions, StateScope } from './types.js';

// Under heavy contention a compare-and-set loop can starve; past this many tries the
// caller learns about it instead of spinning forever.
const MAX_UPDATE_ATTEMPTS = 100;

/** The options keys() takes. */
const KEYS_PAGE = ['limit', 'cursor', 'prefix'] as const;

/** Runs a call with the store's CLOSED and BACKEND handling. */
export type Runner = <T>(fn: () => Promise<T>) => Promise<T>;

/** Build the StateScope for `scope`; `run` applies the store's CLOSED and BACKEND handling. */
export function createStateScope(
  backend: CompleteBackend,
  scope: string,
  run: Runner,
  maxValueBytes: number,
  codecs: CodecChain,
): StateScope {
  // A value is held to the store's maxPayloadBytes, as a checkpoint is: on every backend the
  // same value is refused, before anything is written, rather than by the server mid-write.
  // The limit counts the JSON text, before the codecs; `stored` is what the backend keeps.
  const encodeValue = (key: string, value: unknown): Encoded & { stored: string } => {
    const encoded = encodeJson(value, 'value');
    const { text } = encoded;
    checkPayloadSize('state value', text.length, () => encodedSize(text), maxValueBytes);
    return { ...encoded, stored: codecs.encode(text, { scope, key }) };
  };
  const decodeValue = (key: string, stored: string) =>
    parseValue(codecs.decode(stored, { scope, key }).text, { scope, key });

  return {
    get: (key) =>
      run(async () => {
        checkName(key, 'key');
        const text = await backend.stateGet(scope, key);
        return text === undefined ? undefined : decodeValue(key, text);
      }),

    set: (key, value) =>
      run(async () => {
        checkName(key, 'key');
        await backend.stateSet(scope, key, encodeValue(key, value).stored);
      }),

    setIfAbsent: (key, value) =>
      run(async () => {
        checkName(key, 'key');
        return backend.stateCompareAndSet(scope, key, null, encodeValue(key, value).stored);
      }),

    delete: (key) =>
      run(async () => {
        checkName(key, 'key');
        return backend.stateDelete(scope, key);
      }),

    keys: (page?: PageOptions & { prefix?: string }): Promise<Page<string>> =>
      run(async () => {
        const prefix = checkOptions(page, 'page', KEYS_PAGE, 'keys()').prefix ?? '';
        if (typeof prefix !== 'string' || prefix.includes('\0') || !prefix.isWellFormed()) {
          throw invalidArgument(
            'prefix',
            `prefix must be a string of key characters, got ${describe(prefix)}.`,
          );
        }
        const owner: CursorOwner = { method: 'keys', listing: JSON.stringify([scope, prefix]) };
        const { limit, after } = readPage<string>(page, owner, KEYS_PAGE);
        if (after !== null && typeof after !== 'string') {
          throw invalidArgument('cursor', 'cursor is damaged; start over with cursor null.');
        }
        if (!backend.capabilities.listStateKeys) {
          throw unsupported(backend.name, 'state().keys()', 'listStateKeys');
        }
        const keys = await backend.stateKeys(scope, { prefix, after, limit: limit + 1 });
        return toPage(keys, limit, owner, (last) => last);
      }),

    // `fn` runs outside `run`, so that an error it throws reaches the caller as it is, not
    // as a BACKEND failure.
    update: async (key, fn) => {
      await run(async () => {
        checkName(key, 'key');
        if (typeof fn !== 'function') throw invalidArgument('fn', 'update() needs a function.');
      });
      // Whether each compare that failed was followed by a read of the very value compared:
      // then nothing changed it in between, and the compare failed for another reason.
      let unchangedEachTime = true;
      let compared: string | null | undefined;
      for (let attempt = 1; attempt <= MAX_UPDATE_ATTEMPTS; attempt++) {
        const before = await run(async () => (await backend.stateGet(scope, key)) ?? null);
        if (compared !== undefined && before !== compared) unchangedEachTime = false;
        // The compare-and-set compares the stored text as read, so it holds with codecs too.
        const next = encodeValue(key, fn(before === null ? undefined : decodeValue(key, before)));
        if (await run(() => backend.stateCompareAndSet(scope, key, before, next.stored))) {
          return next.value;
        }
        compared = before;
      }
      const after = await run(async () => (await backend.stateGet(scope, key)) ?? null);
      if (unchangedEachTime && after === compared) {
        // A race changes the value; this one never changed. Retrying cannot help.
        throw new CkptError(
          'BACKEND',
          `state update of ${JSON.stringify(key)} failed: the ${backend.name} backend's compare-and-set did not match the value it had just read, ${MAX_UPDATE_ATTEMPTS} times, and nothing changed that value in between, so retrying will not help. The backend compares the value otherwise than it reads it; report this with the backend's name. set() writes the key without comparing.`,
          { details: { argument: 'key' } },
        );
      }
      throw new CkptError(
        'CONFLICT',
        `state update of ${JSON.stringify(key)} lost ${MAX_UPDATE_ATTEMPTS} races in a row to other writers of that key; retry later.`,
        { details: { argument: 'key' } },
      );
    },
  };
}
