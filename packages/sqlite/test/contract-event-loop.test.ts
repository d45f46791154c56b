/**
 * The contract suite on SQLite with the writes committed on the event loop: on files, and on
 * one ':memory:' database.
 */
import { runContractTests } from '@ckpt/contract-tests';
import { sqlite } from '@ckpt/sqlite';
import { fileHarness, NATIVE } from './support/contract-files.js';

runContractTests(fileHarness(false));

runContractTests({
  name: "sqlite (':memory:')",
  capabilities: NATIVE,
  create: () => sqlite({ path: ':memory:' }),
  modelRuns: 50,
});
