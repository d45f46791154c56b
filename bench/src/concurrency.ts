/**
 * Many agents in one process, each on a session of its own: every step saves a 10 KiB state
 * with two transcript items, then loads the head. For 1, 8 and 64 agents at once: throughput,
 * the p99 of one step, and the p99 of the event loop's delay meanwhile (how late a 1 ms timer
 * fires), for ckpt on and off its writer thread, the raw
 * driver doing one transaction a step, and LangGraph's saver on the same database.
 */
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { langgraphStep } from './langgraph.js';
import { agentState } from './payloads.js';

const KIB = 1024;
/** The event loop probe's interval. */
const PROBE_MS = 1;

/** One agent's step: given the step number, its state and its two new items. */
export type Step = (
  step: number,
  state: Record<string, unknown>,
  said: unknown[],
) => Promise<unknown>;

/** A way of storing agent steps: a step function per agent (each on its own session). */
export interface Contender {
  name: string;
  agent: (n: number) => Step;
}

/** One line of the table. */
export interface ConcurrencyRow {
  backend: string;
  agents: number;
  contender: string;
  stepsPerSec: number;
  p99StepMs: number;
  p99LoopDelayMs: number;
  /** Throughput over the first contender's (ckpt) at the same number of agents, inverted: theirs / ours. */
  ckptOver: number | null;
}

const states = Array.from({ length: 64 }, (_, i) => agentState(10 * KIB, i));
const said = (i: number) => [
  { role: 'user', text: `question ${i}` },
  { role: 'agent', text: `answer ${i}` },
];

/** Run `agents` agents of `contender` for `steps` steps each (after a warm-up of a few). */
async function measure(contender: Contender, agents: number, steps: number) {
  const runners = Array.from({ length: agents }, (_, n) => contender.agent(n));
  for (const [n, step] of runners.entries())
    for (let i = 0; i < 3; i++) await step(i, states[(n + i) % 64]!, said(i));
  // The event loop's delay: how late a 1 ms timer fires, the gap between its turns less the
  // millisecond it asked for. A contender that never lets the loop turn (a synchronous
  // driver) shows its whole run. A timer rather than a probe that asks for every turn, which
  // would spin the idle loop and take a core from a contender that works on another thread.
  const gaps: number[] = [];
  let last = performance.now();
  let probing = true;
  const probe = () => {
    const now = performance.now();
    gaps.push(Math.max(0, now - last - PROBE_MS));
    last = now;
    if (probing) setTimeout(probe, PROBE_MS);
  };
  setTimeout(probe, PROBE_MS);
  const times: number[] = [];
  const began = performance.now();
  await Promise.all(
    runners.map(async (step, n) => {
      for (let i = 3; i < steps + 3; i++) {
        const t = performance.now();
        await step(i, states[(n + i) % 64]!, said(i));
        times.push(performance.now() - t);
      }
    }),
  );
  const wall = performance.now() - began;
  probing = false;
  gaps.push(Math.max(0, performance.now() - last - PROBE_MS));
  gaps.sort((a, b) => a - b);
  times.sort((a, b) => a - b);
  return {
    stepsPerSec: (times.length / wall) * 1000,
    p99StepMs: times[Math.floor(times.length * 0.99)]!,
    p99LoopDelayMs: gaps[Math.floor(gaps.length * 0.99)]!,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * The table for `backend`: each contender at 1, 8 and 64 agents, in `rounds` rounds
 * interleaved (each round runs every contender once, starting one further along), so that the
 * machine's drift and a run's slow first seconds fall on all of them alike. Each figure is the
 * median over the rounds; the ratio is the median of each round's ratio.
 */
export async function concurrency(
  backend: string,
  contenders: Contender[],
  stepsFor: (agents: number) => number,
  rounds = 1,
): Promise<ConcurrencyRow[]> {
  const rows: ConcurrencyRow[] = [];
  for (const agents of [1, 8, 64]) {
    const runs = contenders.map(() => [] as Awaited<ReturnType<typeof measure>>[]);
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < contenders.length; k++) {
        const i = (k + round) % contenders.length;
        runs[i]!.push(await measure(contenders[i]!, agents, stepsFor(agents)));
      }
    }
    const ours = runs[0]!;
    for (const [i, contender] of contenders.entries()) {
      const mine = runs[i]!;
      rows.push({
        backend,
        agents,
        contender: contender.name,
        stepsPerSec: median(mine.map((m) => m.stepsPerSec)),
        p99StepMs: median(mine.map((m) => m.p99StepMs)),
        p99LoopDelayMs: median(mine.map((m) => m.p99LoopDelayMs)),
        ckptOver: i === 0 ? null : median(mine.map((m, r) => ours[r]!.stepsPerSec / m.stepsPerSec)),
      });
    }
  }
  return rows;
}

/** A LangGraph saver as a contender: each agent on a thread of its own. */
export function saverContender(name: string, saver: BaseCheckpointSaver): Contender {
  const run = Date.now();
  let made = 0;
  return { name, agent: (n) => langgraphStep(saver, `agents-${run}-${made++}-${n}`) };
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Print the rows as a table. */
export function printConcurrency(rows: ConcurrencyRow[]): void {
  if (rows.length === 0) return;
  console.log(
    '\nConcurrency: agents in one process, each on its own session (step: save 10 KiB + 2 items, load head)',
  );
  const header = [
    'backend',
    'agents',
    'contender',
    'steps/s',
    'ckpt is',
    'p99 step ms',
    'p99 loop delay ms',
  ];
  const lines = rows.map((r) => [
    r.backend,
    String(r.agents),
    r.contender,
    fmt(r.stepsPerSec),
    r.ckptOver === null ? '' : `${fmt(r.ckptOver, 2)}x`,
    fmt(r.p99StepMs, 2),
    fmt(r.p99LoopDelayMs, 2),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const render = (cells: string[]) =>
    cells
      .map((c, i) => (i >= 3 || i === 1 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ');
  console.log(render(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(render(l));
}
