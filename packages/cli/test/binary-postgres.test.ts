/** The built `ckpt` executable, run as a child process against postgres. */
import { binaryCasesOn } from './support/binary-cases.js';

binaryCasesOn('postgres');
