/** The server kills the store's connections under load (KILL CONNECTION of its own ids only). */
import { CheckpointStore } from '@ckpt/core';
import { mysql } from '@ckpt/mysql';
import { expectDroppedConnectionsSurvived, summary, writeWhileDropping } from '@ckpt/test-servers';
import { describe, it } from 'vitest';
import {
  available,
  connectionIds,
  dropNamespace,
  freshNamespace,
  killAll,
  url,
} from './support.js';

describe.skipIf(!available)('mysql when the server kills its connections', () => {
  it.each([{ groupCommit: true }, { groupCommit: false }])(
    'lives through them under 16 writers on a pool of 10, groupCommit $groupCommit',
    async ({ groupCommit }) => {
      const backend = mysql({ url, namespace: freshNamespace(), groupCommit });
      const ids = connectionIds(backend);
      const store = new CheckpointStore(backend);
      try {
        const kill = () => killAll(ids);
        const report = await writeWhileDropping({
          store,
          writers: 16,
          faults: Array(12).fill(kill),
        });
        console.info('mysql dropped connections:', JSON.stringify(summary(report)));
        expectDroppedConnectionsSurvived(report, {
          brokenConnectionUsed: "Can't add new command when connection is in closed state",
        });
      } finally {
        await store.close();
        await dropNamespace(backend.namespace);
      }
    },
  );
});
