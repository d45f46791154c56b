/**
 * The contract suite on SQLite with the writes committed on the event loop: on files, and on
 * one ':memory:' database.
 */
import { runContractTests } from '@ckpt/contract-tests';
import { sqlite } from '@ckpt/sqlite';
import { ALL, contractFiles } from './support/contract-files.js';

const files = contractFiles('event-loop');
const open = (path: string, namespace?: string) =>
  files.opened(sqlite({ path, namespace, worker: false }), { path, namespace });

runContractTests({
  name: 'sqlite (file, WAL, synchronous FULL, worker: false)',
  capabilities: ALL,
  create: () => open(files.fresh('native')),
  connect: (backend) => open(files.where(backend).path, files.where(backend).namespace),
  namespaced: (backend, namespace) => open(files.where(backend).path, namespace),
});

runContractTests({
  name: "sqlite (':memory:')",
  capabilities: ALL,
  create: () => sqlite({ path: ':memory:' }),
  modelRuns: 50,
});
