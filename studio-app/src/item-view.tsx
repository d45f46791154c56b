/**
 * A transcript item by its kind: a chat message (as the `ckpt` command reads messages of
 * LangGraph, the Agents SDK, the AI SDK and plain `{ role, text }`) with its role, text and
 * the tools it calls; a string as text; anything else as a JSON tree.
 */
import { JsonTree } from './json-tree.js';
import { type Json, messageView } from './wire.js';

/** One transcript item. */
export function ItemView({ item }: { item: Json }) {
  const message = messageView(item);
  if (message !== null) {
    return (
      <div class={`message role-${message.role.replace(/[^a-z0-9_-]/gi, '')}`}>
        <span class="role">
          {message.role}
          {message.name !== undefined && <span class="role-name"> ({message.name})</span>}
        </span>
        {message.text !== '' && <div class="text">{message.text}</div>}
        {message.toolCalls.map((call, i) => (
          <div class="tool-call" key={call.id ?? i}>
            <span class="tool-arrow">→</span> <code>{call.name}</code>
            <code class="tool-args">({call.arguments})</code>
          </div>
        ))}
      </div>
    );
  }
  if (typeof item === 'string') {
    return (
      <div class="message">
        <div class="text">{item}</div>
      </div>
    );
  }
  return <JsonTree value={item} open={1} />;
}
