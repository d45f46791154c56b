/** The contract suite on SQLite files, the writes committed on the writer thread (the default). */
import { runContractTests } from '@ckpt/contract-tests';
import { fileHarness } from './support/contract-files.js';

runContractTests(fileHarness(true));
