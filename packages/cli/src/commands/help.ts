/** Help text every command carries. */
import type { Command } from 'commander';

/** Add an example to `command`'s help. */
export function example(command: Command, ...lines: string[]): Command {
  return command.addHelpText('after', `\nExample:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}
