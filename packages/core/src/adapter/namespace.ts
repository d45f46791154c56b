/** The `namespace` option every adapter takes. */
import { invalidArgument } from '../values/errors.js';

/** The namespace used when none is given. */
export const DEFAULT_NAMESPACE = 'ckpt';
const NAMESPACE = /^[a-z][a-z0-9_]{0,30}$/;

/** Validate a namespace (default `ckpt`): a lowercase letter, then up to 30 of `a-z0-9_`. */
export function checkNamespace(namespace: unknown = DEFAULT_NAMESPACE): string {
  if (typeof namespace !== 'string' || !NAMESPACE.test(namespace)) {
    throw invalidArgument(
      'namespace',
      `namespace must match ${NAMESPACE} (a lowercase letter, then up to 30 lowercase letters, digits or _), got ${JSON.stringify(namespace)}.`,
    );
  }
  return namespace;
}
