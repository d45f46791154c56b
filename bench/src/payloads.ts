/** Agent-state payloads of a given encoded size, shaped like a conversation. */
import type { JsonValue } from '@ckpt/core';

const SENTENCE = 'The agent considered the plan, called a tool, and wrote down what it learned. ';

/** A JSON object whose encoding is `bytes` long (within a few bytes). */
export function agentState(bytes: number, step = 0): { [key: string]: JsonValue } {
  const messages: JsonValue[] = [];
  const base = { step, goal: 'Plan a weekend in Lisbon', messages };
  let size = JSON.stringify(base).length;
  while (size < bytes) {
    const room = bytes - size - 40;
    const text = SENTENCE.repeat(Math.ceil(Math.max(room, 1) / SENTENCE.length)).slice(
      0,
      Math.max(room, 1),
    );
    const message = { role: messages.length % 2 ? 'agent' : 'user', text: text.slice(0, 2000) };
    messages.push(message);
    size = JSON.stringify(base).length;
    if (room <= 0) break;
  }
  return base;
}
