/** The built `ckpt` executable, run as a child process against sqlite. */
import { binaryCasesOn } from './support/binary-cases.js';

binaryCasesOn('sqlite');
