/** The built `ckpt` executable, run as a child process against mariadb. */
import { binaryCasesOn } from './support/binary-cases.js';

binaryCasesOn('mariadb');
