/** What to do about Redis's refusals, by the word its error replies start with: the backend's `errorHint`. */
import { type ErrorHint, SERVER_HINTS } from '@ckpt/core/adapter';

// Redis names an error by its reply's first word: WRONGPASS for a wrong user or password,
// NOAUTH for a server that wants a password the URL does not give.
const HINTS: Readonly<Record<string, string>> = {
  WRONGPASS: SERVER_HINTS.loginRefused,
  NOAUTH: SERVER_HINTS.loginRefused,
};

/** The hint for a failure whose message starts with one of Redis's error words. */
export const redisErrorHint: ErrorHint = (err) => {
  const word = /^[A-Z]+/.exec(String((err as Error | null)?.message))?.[0];
  return word !== undefined && Object.hasOwn(HINTS, word) ? HINTS[word] : undefined;
};
