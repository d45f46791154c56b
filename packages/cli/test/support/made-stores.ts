/** Stores a test file makes by URL, each in a namespace of its own, destroyed when it ends. */
import { openStore } from '@ckpt/core';

/** Fresh namespaces starting with `prefix`, and the URLs made with them, to destroy at the end. */
export function madeStores(prefix: string) {
  let made = 0;
  const urls: string[] = [];
  return {
    /** A namespace no other test (or run) uses. */
    unique: () => `${prefix}_${process.pid}_${made++}_${Math.random().toString(36).slice(2, 6)}`,
    /** Destroy `url`'s store (if one was made there) when `destroyAll` runs. */
    track(url: string): string {
      urls.push(url);
      return url;
    },
    /** Destroy every store tracked. */
    async destroyAll(): Promise<void> {
      for (const url of urls) {
        const store = await openStore(url, { create: false }).catch(() => null);
        await store?.destroy();
      }
    },
  };
}
