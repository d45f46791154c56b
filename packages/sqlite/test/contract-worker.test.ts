/** The contract suite on SQLite files, the writes committed on the writer thread (the default). */
import { runContractTests } from '@ckpt/contract-tests';
import { sqlite } from '@ckpt/sqlite';
import { ALL, contractFiles } from './support/contract-files.js';

const files = contractFiles('worker');
const open = (path: string, namespace?: string) =>
  files.opened(sqlite({ path, namespace, worker: true }), { path, namespace });

runContractTests({
  name: 'sqlite (file, WAL, synchronous FULL, worker: true)',
  capabilities: ALL,
  create: () => open(files.fresh('native')),
  connect: (backend) => open(files.where(backend).path, files.where(backend).namespace),
  namespaced: (backend, namespace) => open(files.where(backend).path, namespace),
});
