/**
 * A script that opens a store from a URL, writes a checkpoint and never calls close(): the
 * test runs it and waits for the process to end by itself. Arguments: the URL, the namespace.
 */
import { CheckpointStore } from '@ckpt/core';
import { postgres } from '@ckpt/postgres';

const [url, namespace] = process.argv.slice(2);
const store = new CheckpointStore(postgres({ url: url!, namespace }));
const written = await store.checkpoint('idle-exit', { step: 1 });
console.log(JSON.stringify({ seq: written.seq }));
