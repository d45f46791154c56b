import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchCopy, printCopy } from './copy-bench.js';

const dir = mkdtempSync(join(tmpdir(), 'zz-copy-'));
const t = performance.now();
printCopy(
  await benchCopy(
    dir,
    'postgres://postgres@127.0.0.1:5432/test',
    (process.env.SIZES ?? '1000,10000').split(',').map(Number),
  ),
);
console.log('total', ((performance.now() - t) / 1000).toFixed(1), 's');
rmSync(dir, { recursive: true, force: true });
