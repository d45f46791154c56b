/**
 * How every adapter opens and closes: its migration (or the search for its namespace) started
 * once as it opens, `ready()` reporting how that went, and a close that waits for it, so that
 * a connection is never ended under a migration, and that runs once however often it is called.
 */

/** An adapter's opening, from `openAdapter`. */
export interface AdapterOpening<T> {
  /**
   * The migration's outcome. A failure is reported to whoever awaits it (a call, `ready()`),
   * never as an unhandled rejection.
   */
  migrated: Promise<T>;
  /** Resolves once the migration is done; rejects with its error. */
  ready(): Promise<void>;
  /** Wait for the migration to settle, then run the adapter's close, once. */
  close(): Promise<void>;
}

/**
 * Start `migrate` (a value is taken as done at once) and pair it with `close`, the adapter's
 * own (ending a pool it opened, closing a file).
 */
export function openAdapter<T>(
  migrate: () => T | Promise<T>,
  close: () => void | Promise<void>,
): AdapterOpening<T> {
  // Started at once, as the adapter opens; a migration that throws rejects like one that fails.
  let migrated: Promise<T>;
  try {
    migrated = Promise.resolve(migrate());
  } catch (err) {
    migrated = Promise.reject(err);
  }
  migrated.catch(() => {});
  let closing: Promise<void> | undefined;
  return {
    migrated,
    ready: async () => {
      await migrated;
    },
    close: () => {
      closing ??= migrated.then(
        () => close(),
        () => close(),
      );
      return closing;
    },
  };
}
