/**
 * The native backend is four roles joined into one: every member of `CheckpointBackend` belongs
 * to exactly one of them, so a member added to the contract is added to a role. Checked by
 * `pnpm typecheck`; the run only repeats what the types say.
 */
import type {
  BackendLifecycle,
  CheckpointBackend,
  CheckpointLog,
  SessionTransfer,
  StateStore,
} from '@ckpt/core/adapter';
import { describe, expectTypeOf, it } from 'vitest';

type Log = keyof CheckpointLog;
type State = keyof StateStore;
type Transfer = keyof SessionTransfer;
type Lifecycle = keyof BackendLifecycle;

describe('CheckpointBackend', () => {
  it('is its four roles and nothing else', () => {
    expectTypeOf<keyof CheckpointBackend>().toEqualTypeOf<Log | State | Transfer | Lifecycle>();
  });

  it('gives each member to one role', () => {
    type Shared =
      | (Log & (State | Transfer | Lifecycle))
      | (State & (Transfer | Lifecycle))
      | (Transfer & Lifecycle);
    expectTypeOf<Shared>().toEqualTypeOf<never>();
  });
});
