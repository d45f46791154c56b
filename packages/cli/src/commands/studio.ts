/** `ckpt studio`: a local web app on the store, until Ctrl-C. */
import { spawn } from 'node:child_process';
import { isCkptError } from '@ckpt/core';
import { type Command, InvalidArgumentError } from 'commander';
import type { Context } from '../context.js';
import { duration } from '../parse.js';
import { hostWarning } from '../studio/host-warning.js';
import { type Studio, startStudio } from '../studio/server.js';
import { example } from './help.js';

/** The port the studio tries first, and how many after it when that one is taken. */
const DEFAULT_PORT = 4280;
const PORTS_TRIED = 10;

/** A port number, 0 (any free one) to 65535. */
function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) {
    throw new InvalidArgumentError(
      `port must be a whole number from 0 (any free port) to 65535, got ${JSON.stringify(value)}.`,
    );
  }
  return n;
}

/** Open `url` in the system's browser; a failure is only noted. */
function openBrowser(ctx: Context, url: string): void {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]];
  const child = spawn(command, args as string[], { stdio: 'ignore', detached: true });
  child.on('error', () =>
    ctx.note(`could not open a browser (${command}); open the address above.`),
  );
  child.unref();
}

/** Until the command is told to stop: Ctrl-C, or a TERM signal. */
function stopped(ctx: Context): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      stopListening?.();
      process.off('SIGTERM', stop);
      resolve();
    };
    const stopListening = ctx.io.onInterrupt?.(stop);
    process.on('SIGTERM', stop);
  });
}

export function registerStudio(program: Command, ctx: Context): void {
  example(
    program
      .command('studio')
      .description(
        "a local web app on the store: sessions, each session's tree, checkpoints and diffs, transcripts, state; read-only unless --write",
      )
      .option(
        '--port <n>',
        `the port (default ${DEFAULT_PORT}, or the next free one; 0: any free port)`,
        port,
      )
      .option(
        '--host <address>',
        'the address to listen on (default 127.0.0.1, this machine only); any other is warned about',
      )
      .option(
        '--write',
        'allow changes from the page: rollback, fork, prune, delete, state set and delete',
      )
      .option('--open', 'open the address in a browser')
      .option(
        '--poll <duration>',
        'how often live views read a store that cannot watch its changes (default 1s); one that can is read when it changes',
        duration('poll'),
      )
      .action(
        async (
          opts: { port?: number; host?: string; write?: boolean; open?: boolean; poll?: number },
          command: Command,
        ) => {
          const store = await ctx.store();
          const storeUrl = String(command.optsWithGlobals().store ?? ctx.io.env.CKPT_STORE);
          const host = opts.host ?? '127.0.0.1';
          const ports =
            opts.port === undefined
              ? Array.from({ length: PORTS_TRIED }, (_, i) => DEFAULT_PORT + i)
              : [opts.port];
          let studio: Studio | undefined;
          for (const [i, p] of ports.entries()) {
            try {
              studio = await startStudio({
                store,
                storeUrl,
                host,
                port: p,
                write: opts.write,
                pollMs: opts.poll,
                keyNames: ctx.keyNames,
              });
              break;
            } catch (err) {
              if (!isCkptError(err, 'CONFLICT') || i === ports.length - 1) throw err;
            }
          }
          // Listen for Ctrl-C before the address is out, so that a stop right after it counts.
          const stop = stopped(ctx);
          const c = ctx.errColors;
          ctx.print(studio!.url);
          ctx.note(
            `ckpt studio on a ${store.backendName} store, ${opts.write ? c.bold('changes allowed (--write)') : 'read-only (start with --write to allow changes)'}; open the address above. Ctrl-C stops it.`,
          );
          // Last, where a terminal leaves it in view, and below the address it speaks of.
          const warning = hostWarning(host, studio!.port, opts.write === true);
          if (warning !== null) ctx.note(c.yellow(warning));
          if (opts.open) openBrowser(ctx, studio!.url);
          await stop;
          await studio!.close();
        },
      ),
    'ckpt studio --store sqlite:./agent.db',
    'ckpt studio --store postgres://app@db/agents --port 4300 --write --open',
  );
}
