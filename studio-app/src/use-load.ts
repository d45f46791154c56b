/** Reading from the API in a view: again whenever what it depends on changes. */
import { useEffect, useState } from 'preact/hooks';

/** What a read gave: its value (null until the first answer) or its failure. */
export interface Loaded<T> {
  value: T | null;
  error: unknown;
}

/**
 * Call `load` now and whenever `deps` change; the answer of a read that a newer one overtook
 * is dropped, so that a slow answer never replaces a newer one.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [loaded, setLoaded] = useState<Loaded<T>>({ value: null, error: null });
  // The caller names what the read depends on.
  useEffect(() => {
    let current = true;
    load().then(
      (value) => current && setLoaded({ value, error: null }),
      (error: unknown) => current && setLoaded((was) => ({ value: was.value, error })),
    );
    return () => {
      current = false;
    };
  }, deps);
  return loaded;
}
