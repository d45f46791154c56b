/**
 * Timing: variants of one operation run interleaved, round after round in rotating order,
 * so that drift of the machine (cache, disk, other load) falls on all of them alike.
 */

/** One way of doing the operation being measured. */
export interface Variant {
  name: string;
  /** One operation, by caller number `caller` (0 when there is one caller). */
  op: (caller: number) => unknown;
  /** Before each round of this variant, and after it: outside the timing (watchers started and stopped). */
  enter?: () => Promise<unknown>;
  leave?: () => Promise<unknown>;
}

/** What one variant measured. */
export interface Stats {
  ops: number;
  opsPerSec: number;
  meanUs: number;
  p50Us: number;
  p99Us: number;
}

/** How long a measurement runs. */
export interface Plan {
  rounds: number;
  perRound: number;
  /** Calls each variant (each caller) makes before it is measured, at the least. */
  warmup: number;
  /**
   * And for at least this long (ms): a process's first thousand or so calls of a path run
   * several times slower than later ones, and an agent saving after every step lives in the
   * later state (the figures are in the README).
   */
  warmupMs: number;
  /** Callers running the operations at once (default 1); each makes `perRound` per round. */
  callers?: number;
}

/**
 * Measure `variants` side by side; returns the stats of each by name. `afterRound`, if given,
 * runs after the warmup and after each round, outside the timing (to discard what the writes
 * stored, so that a long run does not fill an in-memory server).
 */
export async function interleaved(
  variants: Variant[],
  plan: Plan,
  afterRound?: () => Promise<unknown>,
): Promise<Map<string, Stats>> {
  const samples = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  const wall = new Map<string, number>(variants.map((v) => [v.name, 0]));
  const callers = Array.from({ length: plan.callers ?? 1 }, (_, caller) => caller);
  for (const v of variants) {
    await Promise.all(
      callers.map(async (c) => {
        const until = performance.now() + plan.warmupMs;
        for (let i = 0; i < plan.warmup || performance.now() < until; i++) await v.op(c);
      }),
    );
  }
  await afterRound?.();
  for (let round = 0; round < plan.rounds; round++) {
    for (let k = 0; k < variants.length; k++) {
      const v = variants[(round + k) % variants.length]!;
      const out = samples.get(v.name)!;
      await v.enter?.();
      const began = process.hrtime.bigint();
      await Promise.all(
        callers.map(async (caller) => {
          for (let i = 0; i < plan.perRound; i++) {
            const start = process.hrtime.bigint();
            await v.op(caller);
            out.push(Number(process.hrtime.bigint() - start) / 1000);
          }
        }),
      );
      wall.set(v.name, wall.get(v.name)! + Number(process.hrtime.bigint() - began) / 1000);
      await v.leave?.();
    }
    await afterRound?.();
  }
  return new Map([...samples].map(([name, s]) => [name, summarise(s, wall.get(name)!)]));
}

/** Throughput from the wall time (callers overlap); latencies from each operation's own. */
function summarise(samples: number[], wallUs: number): Stats {
  const sorted = samples.slice().sort((a, b) => a - b);
  const total = samples.reduce((a, b) => a + b, 0);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    ops: samples.length,
    opsPerSec: (samples.length / wallUs) * 1e6,
    meanUs: total / samples.length,
    p50Us: at(0.5),
    p99Us: at(0.99),
  };
}
