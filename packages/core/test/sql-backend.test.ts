/** `SqlBackend`: what a wrapper of one may rely on. */
import { describe, expect, it } from 'vitest';
import type { ErrorHint } from '../src/adapter.js';
import { openAdapter } from '../src/adapter.js';
import * as sqlFamily from '../src/sql/index.js';
import { SqlBackend, type SqlBackendParts, type SqlWrites } from '../src/sql/index.js';
import { WRITES } from '../src/sql/sql-backend.js';

/** Parts whose statements never run: these tests read members, they call no storage. */
function parts(errorHint?: ErrorHint): SqlBackendParts<string> {
  const unused = () => Promise.reject(new Error('not run'));
  return {
    name: 'test',
    driver: { run: unused },
    statements: { reads: {} as SqlBackendParts<string>['statements']['reads'], state: {} as never },
    writes: Object.fromEntries(WRITES.map((name) => [name, unused])) as unknown as SqlWrites,
    opening: openAdapter(
      () => undefined,
      () => {},
    ),
    destroy: unused,
    diagnose: unused,
    ...(errorHint && { errorHint }),
  };
}

describe('SqlBackend', () => {
  it('lets a Proxy that binds what it reads hand out its errorHint', () => {
    const hint: ErrorHint = () => 'a hint';
    const backend = new SqlBackend(parts(hint));
    const wrapped = new Proxy(backend, {
      get: (target, key) => {
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    expect(wrapped.errorHint?.(new Error('x'))).toBe('a hint');
  });

  it('has no errorHint where the adapter gives none', () => {
    expect('errorHint' in new SqlBackend(parts())).toBe(false);
  });

  it('names the mutations it was given neither statements nor functions for', () => {
    const { writes, ...rest } = parts();
    const { importSession: _, prune: __, ...most } = writes!;
    expect(() => new SqlBackend({ ...rest, writes: most })).toThrow(
      'SqlBackend test: no prune, importSession; give statements.writes, or writes of its own',
    );
  });

  it('keeps its write pipeline to itself: an adapter hands over a driver and statements', () => {
    const pipeline = [
      'batchedAppends',
      'procedureWrites',
      'appendValues',
      'appendOutcome',
      'countInFlight',
      'retryRolledBack',
      'BusyPoolBatches',
      'statementWrites',
    ];
    expect(Object.keys(sqlFamily).filter((name) => pipeline.includes(name))).toEqual([]);
  });
});
