/**
 * The native backend is five roles joined into one: every member of `CheckpointBackend` belongs
 * to exactly one of them, so a member added to the contract is added to a role. Checked by
 * `pnpm typecheck`; the run only repeats what the types say.
 */
import type {
  BackendLifecycle,
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
type Lifecycle = keyof BackendLifecycle;

describe('CheckpointBackend', () => {
  it('is its five roles and nothing else', () => {
    expectTypeOf<keyof CheckpointBackend>().toEqualTypeOf<
      Log | State | Transfer | Kept | Lifecycle
    >();
  });

  it('gives each member to one role', () => {
    type Shared =
      | (Log & (State | Transfer | Kept | Lifecycle))
      | (State & (Transfer | Kept | Lifecycle))
      | (Transfer & (Kept | Lifecycle))
      | (Kept & Lifecycle);
    expectTypeOf<Shared>().toEqualTypeOf<never>();
  });
});
