#!/usr/bin/env node
/** The `ckpt` executable. */
import { EXIT } from './exit-codes.js';
import { processIo } from './io.js';
import { main } from './main.js';

// A reader that stops early (`ckpt sessions | head -1`, quitting `less`) closes the pipe: the
// output is no longer wanted, which is no failure, so end quietly as other Unix tools do.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(EXIT.OK);
  throw err;
});
// A closed stderr leaves nowhere to write notes; the work itself goes on.
process.stderr.on('error', () => {});

main(process.argv.slice(2), processIo()).then((code) => {
  process.exitCode = code;
});
