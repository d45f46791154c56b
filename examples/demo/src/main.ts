/**
 * One agent session, told in a few steps: save each step with its transcript items, go back
 * in time, branch, fork, then show the transcript and the session list.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type CheckpointStore, type JsonValue, openStore } from '@ckpt/core';

// The embedded default: one SQLite file. Set CKPT_DEMO_URL to try another backend.
const dataDir = fileURLToPath(new URL('../.data/', import.meta.url));
mkdirSync(dataDir, { recursive: true });
const url = process.env.CKPT_DEMO_URL ?? `sqlite:${dataDir}agent.db`;

interface AgentState {
  goal: string;
  plan: string[];
  done: string[];
  [key: string]: JsonValue;
}

async function step(
  store: CheckpointStore,
  sessionId: string,
  state: AgentState,
  said: { role: string; text: string }[],
) {
  const cp = await store.checkpoint(sessionId, state, {
    metadata: { step: state.done.length },
    transcript: said,
  });
  console.log(
    `  saved checkpoint ${cp.seq} (parent ${cp.parent ?? '-'}): done=${JSON.stringify(state.done)}`,
  );
  return cp;
}

async function printTranscript(store: CheckpointStore, sessionId: string) {
  const page = await store.transcript(sessionId, { limit: 100 });
  for (const entry of page.items.slice().reverse()) {
    const { role, text } = entry.item as { role: string; text: string };
    console.log(`    [${entry.seq}] ${role.padEnd(5)} ${text}`);
  }
}

async function main() {
  const store = await openStore(url);
  console.log(`ckpt demo on ${url}`);
  if (url.startsWith('sqlite:'))
    console.log(`(the session lives in ${url.slice('sqlite:'.length)})\n`);
  const id = 'trip-planner';
  const forkId = 'trip-planner-porto';
  // Start the story afresh on every run.
  await store.delete(id);
  await store.delete(forkId);

  console.log('1. The agent works through its plan, saving after every step:');
  const goal = 'Plan a weekend in Lisbon';
  await step(store, id, { goal, plan: ['flights', 'hotel', 'food'], done: [] }, [
    { role: 'user', text: goal },
    { role: 'agent', text: 'I will book flights, a hotel and find food.' },
  ]);
  await step(store, id, { goal, plan: ['hotel', 'food'], done: ['flights'] }, [
    { role: 'agent', text: 'Flights booked: Friday 18:05.' },
  ]);
  await step(store, id, { goal, plan: ['food'], done: ['flights', 'hotel'] }, [
    { role: 'agent', text: 'Hotel booked in Alfama, 2 nights.' },
  ]);

  console.log('\n2. The user dislikes the hotel: roll back to checkpoint 2.');
  await store.rollback(id, 2);
  console.log(
    `  head is now ${await store.head(id)}; history ${JSON.stringify(await store.history(id))}`,
  );

  console.log('\n3. The agent takes another path, which starts a new branch:');
  await step(store, id, { goal, plan: ['food'], done: ['flights', 'hostel'] }, [
    { role: 'user', text: 'Something cheaper, please.' },
    { role: 'agent', text: 'Hostel booked near Bairro Alto.' },
  ]);
  console.log(
    `  history ${JSON.stringify(await store.history(id))} (checkpoint 3 is kept, off the timeline)`,
  );

  console.log('\n4. Fork the conversation at checkpoint 2 to explore an option separately:');
  await store.fork(id, { atSeq: 2, newId: forkId });
  await step(store, forkId, { goal: 'Add a day in Porto', plan: ['train'], done: ['flights'] }, [
    { role: 'user', text: 'What about a day in Porto?' },
  ]);
  console.log(`  ${forkId}: history ${JSON.stringify(await store.history(forkId))}`);

  console.log(`\n5. The transcript of ${id} (oldest first) follows the active timeline:`);
  await printTranscript(store, id);

  console.log('\n6. A crash? Resume from the latest checkpoint:');
  const resumed = await store.load(id);
  console.log(`  resumed at checkpoint ${resumed?.seq}: ${JSON.stringify(resumed?.data)}`);

  console.log('\n7. The session list, most recently updated first:');
  for (const s of (await store.sessions()).items) {
    const from = s.forkedFrom ? `, forked from ${s.forkedFrom.sessionId}@${s.forkedFrom.seq}` : '';
    console.log(`  ${s.sessionId}: head ${s.head}, ${s.checkpoints} checkpoints${from}`);
  }

  await store.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
