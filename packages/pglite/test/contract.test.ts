import { runContractTests } from '@ckpt/contract-tests';
import { pglite } from '@ckpt/pglite';
import { db, namespaces } from './support.js';

runContractTests({
  name: 'pglite (in memory)',
  capabilities: {
    concurrentWriters: true,
    listSessions: true,
    listStateKeys: true,
    watch: true,
    tags: true,
  },
  modelRuns: 50,
  ...namespaces.harness((namespace) => pglite({ db, namespace })),
});
