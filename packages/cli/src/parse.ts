/** Parsing of option and argument values: a bad one is refused before anything is opened. */
import { InvalidArgumentError } from 'commander';
import { BadTag, type Tags, withTag } from './tag-pairs.js';
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

/** Milliseconds in each unit a duration may be written in. */
const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * A parser of a duration, for `name` in messages: a whole number and a unit (`90s`, `45m`,
 * `12h`, `30d`, `2w`, `500ms`), as milliseconds, more than zero. A bare number is refused:
 * which unit it meant cannot be told.
 */
export function duration(name: string): (value: string) => number {
  return (value) => {
    const match = /^(\d+)(ms|s|m|h|d|w)$/.exec(value);
    const ms = match ? Number(match[1]) * DURATION_UNITS[match[2]!]! : Number.NaN;
    if (!Number.isSafeInteger(ms)) {
      throw new InvalidArgumentError(
        `${name} must be a whole number with a unit, such as 30d, 12h, 45m, 90s or 500ms (w for weeks), got ${JSON.stringify(value)}.`,
      );
    }
    // Every session is idle for 0 ms, and every checkpoint older than it: a zero is a slip.
    if (ms === 0) {
      throw new InvalidArgumentError(
        `${name} must be more than zero, such as 30d or 12h, got ${JSON.stringify(value)}.`,
      );
    }
    return ms;
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
 * A parser of a tag option that may be repeated (`--where user=ann --where status=open`): the
 * tags of the options before it with this one's (see `withTag`).
 */
export function tagOption(): (value: string, previous: Tags | undefined) => Tags {
  return (value, previous) => {
    try {
      return withTag(previous ?? {}, value);
    } catch (err) {
      if (err instanceof BadTag) throw new InvalidArgumentError(err.message);
      throw err;
    }
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
