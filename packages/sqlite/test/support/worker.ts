/**
 * A process that uses one SQLite file, for the multi-process tests.
 *   worker.mjs open  PATH                 open (and migrate) the file, print "ok"
 *   worker.mjs write PATH SESSION COUNT TAG  write COUNT checkpoints, print "ack SEQ I" after each
 *   worker.mjs many PATH SESSIONS COUNT TAG  SESSIONS agents at once, each writing COUNT checkpoints
 *                                            to session TAG-n; print "ack n SEQ I" after each
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
  } else if (mode === 'many') {
    // Many agents in one process, each on a session of its own: their writes commit in groups.
    await Promise.all(
      Array.from({ length: Number(sessionId) }, async (_, n) => {
        for (let i = 0; i < Number(count); i++) {
          const cp = await store.checkpoint(`${tag}-${n}`, stepData(`${tag}-${n}`, i), {
            transcript: [`${tag}-${n}:${i}`],
          });
          process.stdout.write(`ack ${n} ${cp.seq} ${i}\n`);
        }
      }),
    );
  } else {
    process.stdout.write('ok\n');
  }
  await store.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
