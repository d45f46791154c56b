/**
 * Ten watchers of other sessions in a process of their own, for the watch bench: the store at
 * the URL given (as `openStore` takes it) is watched until the parent ends this process. It says
 * `ready` once every watcher holds its place.
 */
import { openStore } from '@ckpt/core';

const store = await openStore(process.argv[2]!);
const watchers = Array.from({ length: 10 }, (_, i) => store.watch({ sessionId: `other-${i}` }));
await Promise.all(watchers.map((watcher) => watcher.ready));
for (const watcher of watchers) {
  void (async () => {
    for await (const _ of watcher);
  })();
}
process.send!('ready');
process.on('disconnect', () => {
  void store.close().then(() => process.exit(0));
});
