/** The built `ckpt` executable, run as a child process against redis. */
import { binaryCasesOn } from './support/binary-cases.js';

binaryCasesOn('redis');
