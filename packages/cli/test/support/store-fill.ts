/** A store with all there is to move: branches, a fork, pruned sessions, odd ids, state. */
import type { CheckpointStore, JsonValue } from '@ckpt/core';

/** The session ids `fill` writes. */
export const FILLED_IDS = [
  'main',
  'main-fork',
  'a:b {c}*',
  'Main ',
  'caf\u00e9',
  '\u{1F99C}',
  "it's",
];

/** The state scopes `fill` writes. */
export const FILLED_SCOPES = ['prefs', 'a:b', '\u{1F99C}'];

const pause = () => new Promise((resolve) => setTimeout(resolve, 2));

/** Write the sessions and state, with times apart, so that their order is plain. */
export async function fill(store: CheckpointStore): Promise<void> {
  for (let i = 1; i <= 6; i++) {
    await store.checkpoint(
      'main',
      { step: i, odd: JSON.parse('{"__proto__":{"x":1},"z":0,"a":1}') as JsonValue },
      { metadata: { step: i }, transcript: i % 2 ? [`said ${i}`, { i }] : [] },
    );
  }
  await store.rollback('main', 3);
  await store.checkpoint('main', { branch: true }, { transcript: ['branch'] });
  await pause();
  await store.fork('main', { atSeq: 5, newId: 'main-fork' });
  await store.checkpoint('main-fork', 'after the fork');
  await store.rollback('main-fork', 4);
  await store.checkpoint('main-fork', 'another way');
  await store.rollback('main-fork', 6);
  await store.prune('main', { keepLast: 3 });
  for (const id of FILLED_IDS.slice(2)) {
    await pause();
    await store.checkpoint(id, { id }, { transcript: [id] });
  }
  for (const scope of FILLED_SCOPES) {
    await store.state(scope).set('k', { scope });
    await store.state(scope).set('b', [1, 2]);
  }
}
