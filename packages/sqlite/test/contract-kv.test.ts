/**
 * The KvStore cases on sqliteKv(), and the contract suite on kvBackend(sqliteKv()): every
 * group, watch among them, which reads sqliteKv's log of its writes.
 */
import { runContractTests, runKvStoreTests } from '@ckpt/contract-tests';
import { kvBackend } from '@ckpt/core';
import { sqliteKv } from '@ckpt/sqlite';
import { ALL, contractFiles } from './support/contract-files.js';

const files = contractFiles('kv');
const open = (path: string) => files.opened(kvBackend(sqliteKv({ path })), { path });

runKvStoreTests({ name: 'sqliteKv()', create: () => sqliteKv({ path: files.fresh('kv') }) });

runContractTests({
  name: 'kvBackend(sqliteKv())',
  capabilities: { ...ALL, watch: true },
  create: () => open(files.fresh('kv')),
  connect: (backend) => open(files.where(backend).path),
});
