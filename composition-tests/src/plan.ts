/**
 * How much the suite runs, and where: the backends split in two halves, one a test file, so
 * that the two run at once. `CKPT_COMPOSITION_RUNS` and `CKPT_COMPOSITION_STEPS` ask for more
 * (a deeper search, locally); CI runs the defaults, which keep the suite near a minute.
 */
import { STORES, type StoreUnderTest } from '@ckpt/test-stores';

export const RUNS = Number(process.env.CKPT_COMPOSITION_RUNS ?? 3);
export const STEPS = Number(process.env.CKPT_COMPOSITION_STEPS ?? 8);
/**
 * The seed the sequences are drawn from: fixed, so that every run (CI's too) tries the same
 * sequences; `CKPT_COMPOSITION_SEED` draws others (`random`: a new seed each run, printed on a
 * failure), for a wider search locally.
 */
const seedGiven = process.env.CKPT_COMPOSITION_SEED;
export const SEED = seedGiven === 'random' ? undefined : Number(seedGiven ?? 20_261_206);

const FIRST = ['memory', 'sqlite', 'postgres', 'kvBackend (five-method KV)'];

/** The backends of half `part` (1 or 2) of the suite. */
export function backendsOf(part: 1 | 2): StoreUnderTest[] {
  return STORES.filter((s) => FIRST.includes(s.name) === (part === 1));
}
