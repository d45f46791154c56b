/**
 * `ckpt doctor`: is the store reachable, what does it hold, and is it set up to keep what it
 * acknowledges: the schema version, durability settings, file modes and privileges, as the
 * backend checks them; whether the values it holds can be read with the keys given, and whether
 * the key file is the owner's alone; each problem with what to do.
 */
import { statSync } from 'node:fs';
import type { CheckpointStore, Diagnosis } from '@ckpt/core';
import { allItems, isCkptError } from '@ckpt/core';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { count, shellWord } from '../io.js';
import { diagnoseValues } from './doctor-values.js';
import { example } from './help.js';

/** The counts of sessions, checkpoints and state scopes. */
async function counts(store: CheckpointStore): Promise<Diagnosis> {
  if (!store.capabilities.listSessions) {
    return {
      check: 'contents',
      status: 'ok',
      detail: 'this backend cannot list its sessions, so they were not counted',
    };
  }
  let sessions = 0;
  let checkpoints = 0;
  for await (const s of allItems((cursor) => store.sessions({ limit: 1000, cursor }))) {
    sessions++;
    checkpoints += s.checkpoints;
  }
  let scopes = 0;
  if (store.capabilities.listStateKeys) {
    for await (const _ of allItems((cursor) => store.stateScopes({ limit: 1000, cursor })))
      scopes++;
  }
  return {
    check: 'contents',
    status: 'ok',
    detail: `${count(sessions, 'session')}, ${count(checkpoints, 'checkpoint')}, ${count(scopes, 'state scope')}`,
  };
}

/** Every check, stopping after the first when the store cannot be reached or is not there. */
async function diagnose(ctx: Context): Promise<Diagnosis[]> {
  // Keys that cannot be used (none in the key file, a bad entry) are a usage error, as in every
  // other command, not a store that cannot be reached.
  const keyNames = ctx.keyNames;
  const started = performance.now();
  let store: CheckpointStore;
  try {
    store = await ctx.store();
    await store.info('ckpt doctor');
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // The server (or file system) answered: there is no store where the URL points. Doctor
    // creates none, so a misspelt namespace is a finding, not a new store with nothing in it.
    if (isCkptError(err, 'NOT_FOUND')) {
      return [{ check: 'exists', status: 'fail', detail: message }];
    }
    return [
      {
        check: 'reachable',
        status: 'fail',
        detail: isCkptError(err) ? `${err.code}: ${message}` : message,
      },
    ];
  }
  const ms = performance.now() - started;
  const found: Diagnosis[] = [
    {
      check: 'reachable',
      status: 'ok',
      detail: `${store.backendName}, opened and read in ${ms.toFixed(0)} ms`,
    },
  ];
  found.push(await counts(store));
  found.push(...(await store.diagnose()));
  found.push(...(await diagnoseValues(store, keyNames)));
  const keyFile = ctx.keyFile;
  if (keyFile !== undefined) found.push(keyFileMode(keyFile));
  return found;
}

/**
 * Whether the key file is readable by its owner alone: keys that group or others can read are
 * as good as theirs. (Windows keeps no such mode bits.)
 */
function keyFileMode(file: string): Diagnosis {
  const mode = statSync(file).mode & 0o777;
  if (process.platform === 'win32' || (mode & 0o077) === 0) {
    return { check: 'key file', status: 'ok', detail: `${file} is readable by its owner alone` };
  }
  return {
    check: 'key file',
    status: 'warn',
    detail: `the key file ${file} can be read by its group or others (mode ${mode.toString(8).padStart(4, '0')}), and so can the keys in it`,
    fix: `chmod 600 ${shellWord(file)}`,
  };
}

export function registerDoctor(program: Command, ctx: Context): void {
  example(
    program
      .command('doctor')
      .description(
        "check the store: reachable, what it holds, schema version, durability settings, file modes, privileges, whether its values read with the keys given, the key file's mode; exits 7 when something is wrong",
      )
      .option(
        '--strict',
        'exit 7 on a warning too, such as durability settings that can lose acknowledged writes',
      )
      .action(async (opts: { strict?: boolean }) => {
        // What to do is said only about what is not ok.
        const found = (await diagnose(ctx)).map(
          ({ fix, ...d }): Diagnosis =>
            d.status === 'ok' || fix === undefined ? d : { ...d, fix },
        );
        ctx.output(found, () => {
          const c = ctx.colors;
          const mark = { ok: c.green('✓'), warn: c.yellow('!'), fail: c.red('✗') };
          const width = Math.max(...found.map((d) => d.check.length));
          for (const d of found) {
            ctx.print(`${mark[d.status]} ${d.check.padEnd(width)}  ${d.detail}`);
            if (d.fix && d.status !== 'ok')
              ctx.print(`  ${' '.repeat(width)}  ${c.bold('→')} ${d.fix}`);
          }
        });
        const failing = opts.strict ? ['fail', 'warn'] : ['fail'];
        if (found.some((d) => failing.includes(d.status))) ctx.exitCode = EXIT.DOCTOR;
      }),
    'ckpt doctor --store redis://127.0.0.1:6379',
    'ckpt doctor --strict --json',
  );
}
