/**
 * The AI SDK's chats (`UIMessage[]`) on every ckpt backend, stored as trees: load and save
 * that append only what is new, branches for edits and regenerations, messages upgraded across
 * schema versions, tool approvals decided once, and the active resumable stream of each chat.
 *
 * @packageDocumentation
 * @module @ckpt/ai-sdk
 */
export type { ApprovalDecision } from './approvals.js';
export {
  type ChatChanges,
  type ChatListOptions,
  type ChatSummary,
  type ChatTree,
  CkptChatStore,
  type CkptChatStoreOptions,
  type MessagePage,
} from './chat-store.js';
export type { ChatTags } from './chat-tags.js';
export type {
  InvalidMessage,
  InvalidMessagePolicy,
  InvalidReason,
  MessageSchemas,
} from './presenting.js';
export type { ChatRequest } from './request.js';
export type { SaveResult } from './saving.js';
