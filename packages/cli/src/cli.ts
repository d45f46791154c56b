#!/usr/bin/env node
/** The `ckpt` executable. */
import { processIo } from './io.js';
import { main } from './main.js';

main(process.argv.slice(2), processIo()).then((code) => {
  process.exitCode = code;
});
