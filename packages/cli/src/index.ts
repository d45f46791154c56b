/**
 * The `ckpt` command, also callable from code: `main(argv, io)` runs it and returns the exit
 * status, with `io` giving its streams, environment and (for tests) how stores are opened.
 *
 * @packageDocumentation
 * @module @ckpt/cli
 */
export { EXIT, exitCodeOf } from './exit-codes.js';
export { type CliIo, type Output, processIo } from './io.js';
export { main } from './main.js';
