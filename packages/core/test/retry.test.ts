import { describe, expect, it } from 'vitest';
import { ROLLED_BACK_ATTEMPTS, retryRolledBack } from '../src/adapter.js';

const rolledBack: ReadonlySet<string> = new Set(['ROLLED_BACK']);
const failure = (code: string) => Object.assign(new Error(code), { code });

describe('retryRolledBack', () => {
  it('runs a call again while the server rolls it back, then returns its result', async () => {
    let runs = 0;
    const result = await retryRolledBack(async () => {
      runs++;
      if (runs < 3) throw failure('ROLLED_BACK');
      return 'done';
    }, rolledBack);
    expect(result).toBe('done');
    expect(runs).toBe(3);
  });

  it('never runs a call again after any other failure', async () => {
    let runs = 0;
    const err = await retryRolledBack(async () => {
      runs++;
      throw failure('CONNECTION_LOST');
    }, rolledBack).catch((e: unknown) => e);
    expect((err as Error).message).toBe('CONNECTION_LOST');
    expect(runs).toBe(1);
  });

  it(`gives up after ${ROLLED_BACK_ATTEMPTS} runs with the last failure`, async () => {
    let runs = 0;
    const err = await retryRolledBack(async () => {
      runs++;
      throw failure('ROLLED_BACK');
    }, rolledBack).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('ROLLED_BACK');
    expect(runs).toBe(ROLLED_BACK_ATTEMPTS);
  }, 10_000);
});
