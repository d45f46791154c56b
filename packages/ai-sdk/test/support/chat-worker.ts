/**
 * One server process of the concurrency tests:
 * `node chat-worker.mjs <backend> <namespace> <dir> <startAt> <chatId> <phase> <arg>`.
 * It waits until `startAt` (epoch ms), so that the processes of a test act at once, then:
 * - `turns <tag>`: sends 6 questions tagged `tag`, each answered and saved in its own turn;
 * - `save <messages>`: saves the chat as `messages` (JSON), as `onEnd` does;
 * - `answer <approve|deny>:<message>`: answers the approval of `message` (JSON), as a tab that
 *   shows it does.
 * Prints one JSON line with what happened.
 */
import { CkptChatStore } from '@ckpt/ai-sdk';
import { isCkptError } from '@ckpt/core';
import { storeFromArgs } from '@ckpt/test-stores';
import { answer, runs, send, tools, user } from './route.js';

const handle = await storeFromArgs(process.argv.slice(2));
const [startAt, chatId, phase, arg] = handle.rest as [string, string, string, string];
const chats = new CkptChatStore(handle.store, { tools });
// Connected and warm before the start, so that the processes really act at the same moment.
await chats.load(chatId);
await chats.approval(chatId, 'warm-up');
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAt) - Date.now())));

let result: unknown;
if (phase === 'turns') {
  for (let i = 0; i < 6; i++) {
    await send(chats, chatId, { message: user(`${arg}-${i}`, `${arg} ${i}`) });
  }
  result = { sent: 6 };
} else if (phase === 'save') {
  result = await chats.save(chatId, JSON.parse(arg));
} else {
  // The message as the tab showed it, before either tab answered.
  const [decision, shown] = [arg.split(':')[0], JSON.parse(arg.slice(arg.indexOf(':') + 1))];
  try {
    await send(chats, chatId, {
      message: answer(shown, decision === 'approve'),
      messageId: shown.id,
    });
    result = { won: true, runs: runs.weather };
  } catch (err) {
    if (!isCkptError(err, 'CONFLICT')) throw err;
    result = { won: false, runs: runs.weather };
  }
}
await handle.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
