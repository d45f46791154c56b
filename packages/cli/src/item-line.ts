/**
 * A transcript item on one line, for a person: a message (read as the studio's page reads it,
 * by `messageView` of the studio's wire module) as its role and text, with the tools it calls;
 * anything else as the JSON it is (a string as it is).
 */
import { type MessageView, messageView } from '@ckpt/studio-app/wire';
import type { Colors } from './io.js';

/** Text on one line: each run of whitespace, newlines included, as one space. */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/** A message as `role (name): text → tool(arguments)`. */
export function messageLine(view: MessageView, c: Colors): string {
  const who = `${c.bold(view.role)}${view.name === undefined ? '' : ` (${view.name})`}`;
  const calls = view.toolCalls.map((call) => `${call.name}(${oneLine(call.arguments)})`).join(', ');
  const text = oneLine(view.text);
  if (calls === '') return `${who}: ${text}`;
  return `${who}${text === '' ? '' : `: ${text}`} ${c.cyan('→')} ${calls}`;
}

/** `item` on one line. */
export function itemLine(item: unknown, c: Colors): string {
  const view = messageView(item);
  if (view !== null) return messageLine(view, c);
  return typeof item === 'string' ? oneLine(item) : JSON.stringify(item);
}
