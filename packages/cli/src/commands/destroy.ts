/** `ckpt destroy`: remove a store's namespace whole, behind the same confirmation as `delete`. */
import { allItems, type CheckpointStore } from '@ckpt/core';
import { redactPasswords } from '@ckpt/core/adapter';
import type { Command } from 'commander';
import { confirm } from '../confirm.js';
import type { Context } from '../context.js';
import { example } from './help.js';
import { NotConfirmed } from './repair.js';

/** How many of `fetch`'s items there are, or null when the backend cannot list them. */
async function count(
  can: boolean,
  fetch: (cursor: string | null) => Promise<{ items: unknown[]; cursor: string | null }>,
): Promise<number | null> {
  if (!can) return null;
  let n = 0;
  for await (const _ of allItems(fetch)) n++;
  return n;
}

/** What the store holds: its sessions and state scopes, each null where it cannot be counted. */
async function contents(store: CheckpointStore) {
  const { capabilities } = store;
  return {
    sessions: await count(capabilities.listSessions, (cursor) =>
      store.sessions({ limit: 1000, cursor }),
    ),
    stateScopes: await count(capabilities.listStateKeys, (cursor) =>
      store.stateScopes({ limit: 1000, cursor }),
    ),
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `7 sessions and 2 state scopes`, or what could not be counted. */
function described(found: { sessions: number | null; stateScopes: number | null }): string {
  const sessions = found.sessions === null ? 'its sessions' : plural(found.sessions, 'session');
  return found.stateScopes === null
    ? sessions
    : `${sessions} and ${plural(found.stateScopes, 'state scope')}`;
}

export function registerDestroy(program: Command, ctx: Context): void {
  example(
    program
      .command('destroy')
      .description(
        "remove the store's namespace for good: every session and state value, and the tables, functions or keys that hold them; other namespaces stay (asks first on a terminal)",
      )
      .option('-y, --yes', 'do not ask (needed when stdin is not a terminal)')
      .action(async (opts: { yes?: boolean }) => {
        const where = redactPasswords(ctx.storeUrl);
        // Opened as every command but import opens it: a misspelt one is NOT_FOUND, never a
        // new store made only to be removed.
        const store = await ctx.store();
        const found = await contents(store);
        if (!opts.yes) {
          if (ctx.io.stdin.isTTY !== true) {
            throw new NotConfirmed(
              `destroy removes ${where} for good, with ${described(found)}; pass --yes to confirm when not at a terminal. Nothing was removed.`,
            );
          }
          const sure = await confirm(
            ctx.io,
            `Destroy ${where} with ${described(found)}? This cannot be undone.`,
          );
          if (!sure) throw new NotConfirmed('not confirmed; nothing was removed.');
        }
        await store.destroy();
        ctx.output({ store: where, destroyed: true, ...found }, () =>
          ctx.print(`destroyed ${where}: removed ${described(found)}`),
        );
      }),
    "ckpt destroy --store 'postgres://app@db/agents?namespace=staging' --yes",
    'ckpt destroy --store sqlite:./scratch.db',
  );
}
