/** Running a server call again after the server rolled it back. */
import { errorCode } from '../values/errors.js';

/** How many times a call is run, at most, while the server keeps rolling it back. */
export const ROLLED_BACK_ATTEMPTS = 10;

/**
 * Run `call`, and run it again while it fails with an error after which nothing of the call
 * is left: one whose code is in `nothingLeft`, or for which it answers true (a deadlock, a lock
 * wait that timed out, a serialization failure: the server rolled back the call's whole
 * transaction; or a call that did not run at all). Running it again is then safe. Each pause is
 * random, up to twice the one before (2 ms, 4 ms, … about 1 s in all), so that callers who
 * collided spread out.
 */
export async function retryRolledBack<T>(
  call: () => Promise<T>,
  nothingLeft: ReadonlySet<string> | ((err: unknown) => boolean),
): Promise<T> {
  const again =
    typeof nothingLeft === 'function'
      ? nothingLeft
      : (err: unknown) => nothingLeft.has(errorCode(err));
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (!again(err) || attempt >= ROLLED_BACK_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** attempt));
    }
  }
}
