/** The state beside the checkpoints: `ckpt state <scope> get|set|delete|keys`. */
import { CkptError, type JsonValue } from '@ckpt/core';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { oneOf, positiveInteger } from '../parse.js';
import { deleteState, setState } from '../writes.js';
import { example } from './help.js';

const ACTIONS = ['get', 'set', 'delete', 'keys'] as const;
type Action = (typeof ACTIONS)[number];

/** A value given on the command line, which must be JSON. */
function jsonValue(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `the value must be JSON, got ${JSON.stringify(text)}; quote a string in the shell, such as '"dark"'.`,
      { details: { argument: 'value' } },
    );
  }
}

/** A required argument of an action that was left out: a usage error. */
function missing(action: Action, what: string): CkptError {
  return new CkptError(
    'INVALID_ARGUMENT',
    `state … ${action} needs ${what}; see: ckpt state --help`,
    {
      details: { argument: what },
    },
  );
}

export function registerState(program: Command, ctx: Context): void {
  example(
    program
      .command('state')
      .description(
        'the small JSON key-value state beside the checkpoints: get (exits 3 when unset), set (a JSON value), delete, or keys (ascending) of one scope',
      )
      .argument('<scope>', 'the scope')
      .argument('<action>', ACTIONS.join(', '), oneOf('action', ACTIONS))
      .argument('[key]', 'the key (get, set, delete)')
      .argument('[value]', 'the value, as JSON (set)')
      .option('--prefix <prefix>', 'keys: only those that start with this')
      .option('--limit <n>', 'keys: how many per page (1 to 1000)', positiveInteger('limit'), 1000)
      .option('--cursor <cursor>', 'keys: the page after the one that printed this cursor')
      .action(
        async (
          scope: string,
          action: Action,
          key: string | undefined,
          text: string | undefined,
          opts: { prefix?: string; limit: number; cursor?: string },
          command: Command,
        ) => {
          const store = await ctx.store();
          const state = store.state(scope);
          if (action === 'keys') {
            const page = await state.keys({
              prefix: opts.prefix,
              limit: opts.limit,
              cursor: opts.cursor ?? null,
            });
            ctx.output(page, () => {
              for (const k of page.items) ctx.print(k);
              if (page.cursor !== null) {
                const given = [
                  ...(opts.prefix === undefined ? [] : ['--prefix', opts.prefix]),
                  ...(command.getOptionValueSource('limit') === 'cli'
                    ? ['--limit', String(opts.limit)]
                    : []),
                ];
                ctx.note(
                  `more: ${ctx.commandLine(['state', scope, 'keys', ...given, '--cursor', page.cursor])}`,
                );
              }
            });
            return;
          }
          if (key === undefined) throw missing(action, 'a key');
          if (action === 'get') {
            const value = await state.get(key);
            if (value === undefined) {
              throw new CkptError(
                'NOT_FOUND',
                `state ${JSON.stringify(scope)} has no key ${JSON.stringify(key)}.`,
                {
                  details: { argument: 'key' },
                },
              );
            }
            ctx.print(JSON.stringify(value, null, ctx.json ? 2 : undefined));
          } else if (action === 'set') {
            if (text === undefined) throw missing(action, 'a value');
            const done = await setState(store, scope, key, jsonValue(text));
            ctx.output(done, () => ctx.print(`${scope}: ${key} set`));
          } else {
            const done = await deleteState(store, scope, key);
            ctx.output(done, () =>
              ctx.print(done.deleted ? `${scope}: ${key} deleted` : `${scope}: ${key} was not set`),
            );
          }
        },
      ),
    `ckpt state prefs set theme '"dark"'`,
    'ckpt state prefs get theme',
    'ckpt state prefs keys --prefix th --json',
  );
}
