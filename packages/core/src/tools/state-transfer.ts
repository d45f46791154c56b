/**
 * A state value moved into a store by `importStore` or `copyStore`. With `ifExists: 'skip'` a
 * rerun takes up where an interrupted move stopped, so a value the target already holds is
 * kept, as a session already there is: the value is written only where the key has none.
 */
import type { CheckpointStore } from '../store/store.js';
import type { ImportOptions } from '../store/types.js';
import type { JsonValue } from '../values/json.js';

/** Write `value` at `scope`/`key` of `store` as `ifExists` says; true when it was written. */
export async function moveStateValue(
  store: CheckpointStore,
  scope: string,
  key: string,
  value: JsonValue,
  ifExists: ImportOptions['ifExists'],
): Promise<boolean> {
  const state = store.state(scope);
  if (ifExists === 'skip') return state.setIfAbsent(key, value);
  await state.set(key, value);
  return true;
}
