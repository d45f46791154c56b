/** Parsing of option and argument values: a bad one is refused before anything is opened. */
import { InvalidArgumentError } from 'commander';
import { UsageError } from './usage-error.js';

/** A parser of a positive integer, for `name` in messages. */
export function positiveInteger(name: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) {
      throw new InvalidArgumentError(
        `${name} must be a whole number from 1 up, got ${JSON.stringify(value)}.`,
      );
    }
    return n;
  };
}

/** A parser that takes one of `choices`. */
export function oneOf<T extends string>(name: string, choices: readonly T[]): (value: string) => T {
  return (value) => {
    if (!choices.includes(value as T)) {
      throw new InvalidArgumentError(
        `${name} must be one of ${choices.join(', ')}, got ${JSON.stringify(value)}.`,
      );
    }
    return value as T;
  };
}

/**
 * `value` through `parse`, for an argument checked after the parser ran (one that --thread
 * shifts): a bad value is a usage error, as the parser's own would be.
 */
export function parseArgument<T>(parse: (value: string) => T, value: string): T {
  try {
    return parse(value);
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw new UsageError(err.message);
    throw err;
  }
}
