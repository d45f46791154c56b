/**
 * LangGraph's own checkpointer suite (@langchain/langgraph-checkpoint-validation), every case
 * and its opt-in getDeltaChannelHistory cases, against the saver on every backend. The name
 * '@ckpt/langgraph' is one the suite skips nothing for. Again with `tagKeys: ['source']` on the
 * backends that find sessions by tags: the suite's filters on `source` then take the tag index,
 * and each of its threads changes its `source` (input, then loop), which the index must follow.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckpointStore } from '@ckpt/core';
import { CkptSaver } from '@ckpt/langgraph';
import { emptyStore, SEALED_STORES, STORES } from '@ckpt/test-stores';
import {
  type CheckpointSaverTestInitializer,
  deltaChannelHistoryTests,
  validate,
} from '@langchain/langgraph-checkpoint-validation';
import { afterAll, describe } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-langgraph-validation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const runs = [
  ...[...STORES, ...SEALED_STORES].map((backend) => ({ backend, tagKeys: undefined })),
  ...STORES.map((backend) => ({ backend, tagKeys: ['source'] })),
];

for (const { backend, tagKeys } of runs) {
  const name = tagKeys === undefined ? backend.name : `${backend.name}, tagKeys`;
  const namespace = tagKeys === undefined ? 'lg_validation' : 'lg_validation_tags';
  const own = tagKeys === undefined ? 'v' : 'vt';
  /** The saver on `store`: with tagKeys where the store finds sessions by tags (else as above). */
  const saverOn = (store: CheckpointStore) => {
    const { tags, listSessions } = store.capabilities;
    return new CkptSaver(store, tags && listSessions ? { tagKeys } : {});
  };
  describe(name, () => {
    const opened: { close(): Promise<void> }[] = [];
    let shared: Awaited<ReturnType<typeof backend.open>> | undefined;
    let made = 0;
    afterAll(async () => {
      for (const handle of opened) await handle.close();
    });

    const initializer: CheckpointSaverTestInitializer<CkptSaver> = {
      checkpointerName: '@ckpt/langgraph',
      async createCheckpointer() {
        // A server's namespace is emptied for each checkpointer; elsewhere each gets its own.
        if (backend.server) {
          if (shared === undefined) {
            shared = await backend.open(namespace, dir);
            opened.push(shared);
          }
          await emptyStore(shared.store, ['langgraph']);
          return saverOn(shared.store);
        }
        const handle = await backend.open(`${own}${made++}`, dir);
        opened.push(handle);
        return saverOn(handle.store);
      },
    };
    validate(initializer);
    deltaChannelHistoryTests(initializer);
  });
}
