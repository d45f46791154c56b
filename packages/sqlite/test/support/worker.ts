/**
 * A process that uses one SQLite file, for the multi-process tests.
 *   worker.mjs open  PATH                 open (and migrate) the file, print "ok"
 *   worker.mjs write PATH SESSION COUNT TAG  write COUNT checkpoints, print "ack SEQ I" after each
 */
import { CheckpointStore } from '@ckpt/core';
import { sqlite } from '@ckpt/sqlite';
import { stepData } from './step-data.js';

async function main() {
  const [mode, path, sessionId, count, tag] = process.argv.slice(2);
  const store = new CheckpointStore(sqlite({ path: path! }));
  if (mode === 'write') {
    for (let i = 0; i < Number(count); i++) {
      const cp = await store.checkpoint(sessionId!, stepData(tag!, i), {
        transcript: [`${tag}:${i}`],
      });
      process.stdout.write(`ack ${cp.seq} ${i}\n`);
    }
  } else {
    process.stdout.write('ok\n');
  }
  await store.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
