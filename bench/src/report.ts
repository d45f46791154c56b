/** The benchmark's output: a table on stdout and the same rows as JSON. */
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Stats } from './measure.js';

/** One line of the results. */
export interface Row {
  group: 'vs raw driver' | 'scaling' | 'vs peer' | 'langgraph' | 'codecs';
  operation: string;
  backend: string;
  variant: string;
  stats: Stats;
  /** Median time per op relative to the row it is compared with (raw, small); throughput for peers. */
  ratio: number | null;
  ratioTo: string | null;
  target: string | null;
}

/** `n` with thousands separators and `digits` decimals. */
export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Print `lines` under `header` as a fixed-width table, the first `left` columns left-aligned. */
export function printGrid(title: string, header: string[], lines: string[][], left: number): void {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const render = (cells: string[]) =>
    cells.map((c, i) => (i < left ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\n${title}`);
  console.log(render(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(render(l));
}

/** Print `rows` as a fixed-width table. */
export function printTable(title: string, rows: Row[]): void {
  if (rows.length === 0) return;
  const header = [
    'operation',
    'backend',
    'variant',
    'ops/s',
    'ratio',
    'vs',
    'target',
    'p50 µs',
    'p99 µs',
  ];
  const lines = rows.map((r) => [
    r.operation,
    r.backend,
    r.variant,
    fmt(r.stats.opsPerSec),
    r.ratio === null ? '' : `${fmt(r.ratio, 2)}x`,
    r.ratioTo ?? '',
    r.target ?? '',
    fmt(r.stats.p50Us, 1),
    fmt(r.stats.p99Us, 1),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const render = (cells: string[]) =>
    cells
      .map((c, i) => (i >= 3 && i !== 5 && i !== 6 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ');
  console.log(`\n${title}`);
  console.log(render(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(render(l));
}

/** The bytes a saver's database holds after the same fill. */
export interface StorageRow {
  backend: string;
  saver: string;
  bytes: number;
  /** Bytes over those of the first saver of the same backend (ckpt's). */
  ratio: number | null;
}

/** Print storage rows as a table. */
export function printStorage(title: string, rows: StorageRow[]): void {
  if (rows.length === 0) return;
  console.log(`\n${title}`);
  const lines = rows.map((r) => [
    r.backend,
    r.saver,
    fmt(r.bytes),
    r.ratio === null ? '' : `${fmt(r.ratio, 2)}x`,
  ]);
  const header = ['backend', 'saver', 'bytes', 'vs ckpt'];
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const render = (cells: string[]) =>
    cells.map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  console.log(render(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(render(l));
}

/** Write everything measured to `path` as JSON. */
export function writeJson(path: string, payload: unknown): void {
  mkdirSync(new URL('.', `file://${path}`).pathname, { recursive: true });
  writeFileSync(path, `${JSON.stringify(payload, null, 2)}\n`);
}
