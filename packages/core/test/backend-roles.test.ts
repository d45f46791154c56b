/**
 * The native backend is six roles joined into one: every member of `CheckpointBackend` belongs
 * to exactly one of them, so a member added to the contract is added to a role. Checked by
 * `pnpm typecheck`; the run only repeats what the types say.
 */
import type {
  BackendLifecycle,
  ChangeLog,
  CheckpointBackend,
  CheckpointLog,
  Retention,
  SessionTransfer,
  StateStore,
} from '@ckpt/core/adapter';
import { describe, expectTypeOf, it } from 'vitest';

type Log = keyof CheckpointLog;
type State = keyof StateStore;
type Transfer = keyof SessionTransfer;
type Kept = keyof Retention;
type Changes = keyof ChangeLog;
type Lifecycle = keyof BackendLifecycle;

describe('CheckpointBackend', () => {
  it('is its six roles and nothing else', () => {
    expectTypeOf<keyof CheckpointBackend>().toEqualTypeOf<
      Log | State | Transfer | Kept | Changes | Lifecycle
    >();
  });

  it('gives each member to one role', () => {
    type Shared =
      | (Log & (State | Transfer | Kept | Changes | Lifecycle))
      | (State & (Transfer | Kept | Changes | Lifecycle))
      | (Transfer & (Kept | Changes | Lifecycle))
      | (Kept & (Changes | Lifecycle))
      | (Changes & Lifecycle);
    expectTypeOf<Shared>().toEqualTypeOf<never>();
  });
});
