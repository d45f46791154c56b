/** `SqlBackend`: what a wrapper of one may rely on. */
import { describe, expect, it } from 'vitest';
import type { ErrorHint } from '../src/adapter.js';
import { openAdapter } from '../src/adapter.js';
import { SqlBackend, type SqlBackendParts } from '../src/sql/index.js';

/** Parts whose statements never run: these tests read members, they call no storage. */
function parts(errorHint?: ErrorHint): SqlBackendParts<string> {
  const unused = () => Promise.reject(new Error('not run'));
  return {
    name: 'test',
    runner: { run: unused },
    statements: { reads: {} as SqlBackendParts<string>['statements']['reads'], state: {} as never },
    writes: {} as SqlBackendParts<string>['writes'],
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
});
