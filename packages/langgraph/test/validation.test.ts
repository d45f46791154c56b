/**
 * LangGraph's own checkpointer suite (@langchain/langgraph-checkpoint-validation), every case
 * and its opt-in getDeltaChannelHistory cases, against the saver on every backend. The name
 * '@ckpt/langgraph' is one the suite skips nothing for.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

for (const backend of [...STORES, ...SEALED_STORES]) {
  describe(backend.name, () => {
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
            shared = await backend.open('lg_validation', dir);
            opened.push(shared);
          }
          await emptyStore(shared.store, ['langgraph']);
          return new CkptSaver(shared.store);
        }
        const handle = await backend.open(`v${made++}`, dir);
        opened.push(handle);
        return new CkptSaver(handle.store);
      },
    };
    validate(initializer);
    deltaChannelHistoryTests(initializer);
  });
}
