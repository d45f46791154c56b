/**
 * What an integration (a framework's saver or session) takes: a store the caller made, which
 * stays theirs, or a URL that the integration opens with `openStore` and so closes itself.
 */

import { CheckpointStore } from '../store/store.js';
import { CkptError } from '../values/errors.js';
import { openStore } from './open-store.js';

/** A store to use: the store, and whether its user opened it (and so closes it). */
export interface StoreInUse {
  store: Promise<CheckpointStore>;
  opened: boolean;
}

/**
 * `store` as given, or the store its URL names, opened now. A URL that cannot be opened fails
 * the first call that awaits the store, not as an unhandled rejection. Anything else is
 * refused with INVALID_ARGUMENT naming `who`.
 */
export function useStore(store: CheckpointStore | string, who: string): StoreInUse {
  if (typeof store === 'string') {
    const opening = openStore(store);
    opening.catch(() => {});
    return { store: opening, opened: true };
  }
  if (store instanceof CheckpointStore) return { store: Promise.resolve(store), opened: false };
  throw new CkptError(
    'INVALID_ARGUMENT',
    `${who} takes a CheckpointStore or a store URL such as "sqlite:./agent.db".`,
    { details: { argument: 'store' } },
  );
}
