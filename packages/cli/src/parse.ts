/** Parsing of option and argument values: a bad one is refused before anything is opened. */
import { InvalidArgumentError } from 'commander';

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
