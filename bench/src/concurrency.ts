/**
 * Many agents in one process, each on a session of its own: every step saves a 10 KiB state
 * with two transcript items, then loads the head. For 1, 8 and 64 agents at once: throughput,
 * the p99 of one step, and the p99 of the event loop's delay meanwhile (the gap between its
 * turns, measured with a probe that asks for every turn), for ckpt, the raw
 * driver doing one transaction a step, and LangGraph's saver on the same database.
 */
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { langgraphStep } from './langgraph.js';
import { agentState } from './payloads.js';

const KIB = 1024;

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
  // The event loop's delay: the gaps between turns of a probe that asks for every turn. A
  // contender that never lets the loop turn (a synchronous driver) shows its whole run.
  const gaps: number[] = [];
  let last = performance.now();
  let probing = true;
  const probe = () => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
    if (probing) setImmediate(probe);
  };
  setImmediate(probe);
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
  gaps.push(performance.now() - last);
  gaps.sort((a, b) => a - b);
  times.sort((a, b) => a - b);
  return {
    stepsPerSec: (times.length / wall) * 1000,
    p99StepMs: times[Math.floor(times.length * 0.99)]!,
    p99LoopDelayMs: gaps[Math.floor(gaps.length * 0.99)]!,
  };
}

/** The table for `backend`: each contender at 1, 8 and 64 agents. */
export async function concurrency(
  backend: string,
  contenders: Contender[],
  stepsFor: (agents: number) => number,
): Promise<ConcurrencyRow[]> {
  const rows: ConcurrencyRow[] = [];
  for (const agents of [1, 8, 64]) {
    let ours: number | null = null;
    for (const contender of contenders) {
      const m = await measure(contender, agents, stepsFor(agents));
      ours ??= m.stepsPerSec;
      rows.push({
        backend,
        agents,
        contender: contender.name,
        ...m,
        ckptOver: contender === contenders[0] ? null : ours / m.stepsPerSec,
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
