/**
 * The chat page: the chat named in `?chat=` (a new one when there is none), its active branch
 * loaded from the server before `useChat` takes over.
 */
import type { UIMessage } from 'ai';
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Chat } from './chat.js';

function chatIdFromUrl(): string {
  const url = new URL(window.location.href);
  let id = url.searchParams.get('chat');
  if (id === null) {
    id = crypto.randomUUID();
    url.searchParams.set('chat', id);
    window.history.replaceState(null, '', url);
  }
  return id;
}

function App() {
  const [chatId] = useState(chatIdFromUrl);
  const [messages, setMessages] = useState<UIMessage[] | null>(null);
  useEffect(() => {
    fetch(`/api/chat/${encodeURIComponent(chatId)}`)
      .then((response) => response.json())
      .then((body: { messages: UIMessage[] }) => setMessages(body.messages));
  }, [chatId]);
  if (messages === null) return <p>Loading…</p>;
  return <Chat id={chatId} initialMessages={messages} />;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
