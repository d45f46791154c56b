/** The composition suite (src/suite.ts) on half 1 of the backends (src/plan.ts). */
import { DRIVERS } from '../src/drivers/index.js';
import { backendsOf, RUNS, STEPS } from '../src/plan.js';
import { compositionSuite } from '../src/suite.js';

compositionSuite({
  part: '1',
  drivers: DRIVERS,
  backends: backendsOf(1),
  runs: RUNS,
  steps: STEPS,
});
