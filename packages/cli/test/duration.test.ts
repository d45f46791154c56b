/** Durations on the command line (`--idle 30d`, `--older-than 12h`): a number and a unit. */
import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { duration } from '../src/parse.js';

const idle = duration('idle');

describe('a duration', () => {
  it.each([
    ['500ms', 500],
    ['90s', 90_000],
    ['45m', 2_700_000],
    ['12h', 43_200_000],
    ['30d', 2_592_000_000],
    ['2w', 1_209_600_000],
  ])('reads %s as %i ms', (text, ms) => {
    expect(idle(text)).toBe(ms);
  });

  it.each(['30', '1.5h', '-1d', '30 d', 'd', '30D', '30days', '', '99999999999999w'])(
    'refuses %j, naming the option and the units',
    (text) => {
      expect(() => idle(text)).toThrow(InvalidArgumentError);
      expect(() => idle(text)).toThrow(/^idle must be a whole number with a unit, such as 30d/);
    },
  );

  it.each(['0s', '0d', '0ms', '00h'])('refuses %j: nothing is idle for no time', (text) => {
    expect(() => idle(text)).toThrow(InvalidArgumentError);
    expect(() => idle(text)).toThrow(/^idle must be more than zero, such as 30d or 12h, got "0/);
  });
});
