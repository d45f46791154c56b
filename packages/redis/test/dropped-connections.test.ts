/**
 * The server kills the store's connections under load (CLIENT KILL of the clients the store's
 * client named, and no one else's), on a single server and on a cluster.
 */
import { CheckpointStore } from '@ckpt/core';
import { type RedisClient, redis } from '@ckpt/redis';
import { expectDroppedConnectionsSurvived, summary, writeWhileDropping } from '@ckpt/test-servers';
import { describe, it } from 'vitest';
import {
  admin,
  clusterClient,
  dropNamespace,
  freshNamespace,
  masters,
  servers,
  url,
} from './support.js';

/** The name the store's connections give the server (CLIENT SETNAME), unique to this run. */
const NAME = `ckpt-dropped-${process.pid}`;

/** Kill every connection named `NAME` on each master of `on`. */
async function killNamed(on: RedisClient): Promise<void> {
  for (const node of await masters(on)) {
    const list = String(await node.client('LIST'));
    for (const line of list.split('\n')) {
      if (!line.includes(` name=${NAME} `)) continue;
      const id = /^id=(\d+)/.exec(line)![1]!;
      await node.client('KILL', 'ID', id).catch(() => {}); // gone already
    }
  }
}

describe.each(servers)(
  'redis when the server kills its connections, on $name',
  ({ cluster, up }) => {
    it.skipIf(!up)('lives through them under 16 writers', async () => {
      const client = cluster ? clusterClient({ connectionName: NAME }) : undefined;
      const backend = cluster
        ? redis({ client: client!, namespace: freshNamespace() })
        : redis({ url: `${url}?connectionName=${NAME}`, namespace: freshNamespace() });
      const store = new CheckpointStore(backend);
      try {
        const kill = () => killNamed(admin(cluster));
        const report = await writeWhileDropping({
          store,
          writers: 16,
          faults: Array(12).fill(kill),
        });
        console.info('redis dropped connections:', JSON.stringify(summary(report)));
        expectDroppedConnectionsSurvived(report);
      } finally {
        await store.close();
        await client?.quit();
        await dropNamespace(admin(cluster), backend.namespace);
      }
    });
  },
);
