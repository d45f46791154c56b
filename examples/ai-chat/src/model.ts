/**
 * The chat's model: the offline one, unless `AI_GATEWAY_API_KEY` is set; then a real model
 * through the AI Gateway, `AI_CHAT_MODEL` (default `openai/gpt-5-mini`).
 */
import type { LanguageModel } from 'ai';
import { offlineModel } from './offline-model.js';

/** The model the chat route streams from; `wordDelayMs` paces the offline one. */
export function chatModel(options: { wordDelayMs?: number } = {}): LanguageModel {
  if (process.env.AI_GATEWAY_API_KEY) return process.env.AI_CHAT_MODEL ?? 'openai/gpt-5-mini';
  return offlineModel(options);
}
