/**
 * `pnpm bench`: every backend against its raw driver, its scaling, and its peers, side by side
 * in one run. Prints tables and writes bench/results/latest.json.
 * Set CKPT_BENCH_QUICK=1 for a short run (smaller plans and databases).
 */
import { fileURLToPath } from 'node:url';
import type { Plan } from './measure.js';
import { printTable, type Row, writeJson } from './report.js';
import {
  scratchDir,
  sqliteAgentLoop,
  sqliteScaling,
  sqliteSettings,
  sqliteVsRaw,
} from './sqlite.js';

const quick = process.env.CKPT_BENCH_QUICK === '1';
const plan: Plan = quick
  ? { rounds: 4, perRound: 25, warmup: 10 }
  : { rounds: 10, perRound: 100, warmup: 50 };
const large = quick
  ? { sessions: 10_000, checkpoints: 2_000 }
  : { sessions: 100_000, checkpoints: 10_000 };

async function main() {
  const scratch = scratchDir();
  try {
    const settings = { sqlite: sqliteSettings(scratch.dir) };
    console.log('ckpt benchmark', quick ? '(quick)' : '', `node ${process.version}`);
    console.log('durability settings:', JSON.stringify(settings));
    const rows: Row[] = [
      ...(await sqliteVsRaw(scratch.dir, plan)),
      ...(await sqliteScaling(scratch.dir, plan, large)),
      ...(await sqliteAgentLoop(scratch.dir, plan)),
    ];
    printTable(
      'ckpt against the raw driver on the same connection (ratio: median time per op)',
      rows.filter((r) => r.group === 'vs raw driver'),
    );
    printTable(
      'Scaling: cost at a large session and catalog against a small one',
      rows.filter((r) => r.group === 'scaling'),
    );
    printTable(
      'Agent loop (save 10 KiB + 2 transcript items, load latest) against peers (ratio: throughput)',
      rows.filter((r) => r.group === 'vs peer'),
    );
    const out = fileURLToPath(new URL('../results/latest.json', import.meta.url));
    writeJson(out, {
      when: new Date().toISOString(),
      node: process.version,
      quick,
      plan,
      large,
      settings,
      rows,
    });
    console.log(`\nwritten to ${out}`);
  } finally {
    scratch.remove();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
