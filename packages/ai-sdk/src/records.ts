/**
 * How one message is stored: a transcript item that is the `UIMessage` exactly as it was saved,
 * so that any tool reading the transcript (the `ckpt` command's message view among them) sees
 * the message, with one key of this package's beside its own: `ckpt`, holding the application's
 * message schema version it was written under and, for an edited user message, the id of the
 * message it edits. Loads never rewrite a record.
 */
import { createHash } from 'node:crypto';
import type { JsonValue } from '@ckpt/core';
import type { UIMessage } from 'ai';

/** One stored message. */
export interface StoredMessage {
  /** The application's message schema version when the message was saved. */
  version: number;
  message: UIMessage;
  /** For an edit saved under a new id: the id the application gave the edited message. */
  editOf?: string;
}

/** The key of a transcript item that holds what this package records about the message. */
const KEY = 'ckpt';

/** The transcript item for `record`. */
export function toItem(record: StoredMessage): JsonValue {
  const about: Record<string, unknown> = { version: record.version };
  if (record.editOf !== undefined) about.editOf = record.editOf;
  return { ...record.message, [KEY]: about } as unknown as JsonValue;
}

/** The record a transcript item holds, or null for an item this package did not write. */
export function fromItem(item: JsonValue): StoredMessage | null {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return null;
  const { [KEY]: about, ...message } = item;
  if (typeof about !== 'object' || about === null || Array.isArray(about)) return null;
  const { version, editOf } = about;
  if (typeof version !== 'number' || !isMessageShaped(message)) return null;
  const record: StoredMessage = { version, message };
  if (typeof editOf === 'string') record.editOf = editOf;
  return record;
}

/** Whether `value` has the fields every `UIMessage` has: a string id, a role and parts. */
export function isMessageShaped(value: unknown): value is UIMessage {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { id, role, parts } = value as Record<string, unknown>;
  return typeof id === 'string' && id !== '' && typeof role === 'string' && Array.isArray(parts);
}

/** Whether two messages say the same, whatever the order of their object keys. */
export function sameMessage(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

/** A short stable digest of a value, key order ignored. */
export function digestOf(value: unknown): string {
  return createHash('sha256').update(canonical(value)).digest('base64url');
}

/**
 * JSON text with object keys sorted and undefined properties dropped, as JSON drops them: the
 * same message from the browser and from the store gives the same text.
 */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return inner;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(inner).sort())
      sorted[key] = (inner as Record<string, unknown>)[key];
    return sorted;
  });
}

/** The text of a message's text parts, joined: what a chat list shows as its title. */
export function textOf(message: UIMessage): string {
  return message.parts
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join('')
    .trim();
}
