/**
 * One chat with `useChat`: messages, an edit button on each question (a new branch), a branch
 * picker where a message has siblings, and approve / deny buttons on a tool call waiting for
 * approval. Only the last message is sent; the server loads the rest. An answer still being
 * written when the page loads is picked up where it is (`resume`).
 */
import { useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from 'ai';
import { type FormEvent, useCallback, useEffect, useMemo, useRef, useState } from 'react';

/** Every branch of the chat, as `CkptChatStore.tree()` gives it. */
interface ChatTree {
  headId: string | null;
  messages: { message: UIMessage; parentId: string | null }[];
}

const api = (id: string, path = '') => `/api/chat/${encodeURIComponent(id)}${path}`;

export function Chat({ id, initialMessages }: { id: string; initialMessages: UIMessage[] }) {
  const [tree, setTree] = useState<ChatTree | null>(null);
  const [error, setError] = useState<string | null>(null);
  const transport = useMemo(
    () =>
      new DefaultChatTransport({
        api: '/api/chat',
        // Send only the last message, and what useChat was asked to do with it.
        prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({
          body: { id, message: messages.at(-1), trigger, messageId },
        }),
      }),
    [],
  );
  const chat = useChat({
    id,
    messages: initialMessages,
    transport,
    // On load, ask `GET /api/chat/:id/stream` for an answer still being written.
    resume: true,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onError: (err) => setError(readError(err)),
  });
  const { messages, setMessages, sendMessage, addToolApprovalResponse, status } = chat;

  // The server's view after each answer: ids it gave, and every branch for the pickers.
  const refresh = useCallback(async () => {
    const [active, all] = await Promise.all([
      fetch(api(id)).then((r) => r.json() as Promise<{ messages: UIMessage[] }>),
      fetch(api(id, '/tree')).then((r) => r.json() as Promise<ChatTree>),
    ]);
    setMessages(active.messages);
    setTree(all);
  }, [id, setMessages]);
  useEffect(() => {
    if (status === 'ready') void refresh();
  }, [status, refresh]);

  // What another page (or another server process) did to the chat, as it is saved: the
  // server's view again, unless this page is in the middle of an answer of its own.
  const ready = useRef(status === 'ready');
  ready.current = status === 'ready';
  useEffect(() => {
    const changes = new EventSource(api(id, '/watch'));
    changes.onmessage = () => {
      if (ready.current) void refresh();
    };
    return () => changes.close();
  }, [id, refresh]);

  const switchTo = async (messageId: string) => {
    const response = await fetch(api(id, '/switch'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messageId }),
    });
    if (!response.ok) return setError(readError(await response.text()));
    await refresh();
  };

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const input = event.currentTarget.elements.namedItem('text') as HTMLInputElement;
    if (input.value.trim() === '') return;
    setError(null);
    void sendMessage({ text: input.value });
    input.value = '';
  };

  return (
    <main>
      <h1>ckpt chat</h1>
      <ul>
        {messages.map((message) => (
          <Message
            key={message.id}
            message={message}
            siblings={siblingsOf(tree, message.id)}
            onSwitch={switchTo}
            onEdit={(text) => {
              setError(null);
              void sendMessage({ text, messageId: message.id });
            }}
            onDecide={(approvalId, approved) => {
              setError(null);
              void addToolApprovalResponse({ id: approvalId, approved });
            }}
          />
        ))}
      </ul>
      <form onSubmit={submit}>
        <input name="text" data-testid="input" placeholder="Ask something" autoComplete="off" />
        <button
          type="submit"
          data-testid="send"
          disabled={status !== 'ready' && status !== 'error'}
        >
          Send
        </button>
      </form>
      <p className="meta" data-testid="status">
        {status}
      </p>
      {error && (
        <p className="error" data-testid="error">
          {error}
        </p>
      )}
    </main>
  );
}

function Message(props: {
  message: UIMessage;
  siblings: string[];
  onSwitch(messageId: string): void;
  onEdit(text: string): void;
  onDecide(approvalId: string, approved: boolean): void;
}) {
  const { message, siblings } = props;
  const [editing, setEditing] = useState(false);
  const text = message.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
  const at = siblings.indexOf(message.id);
  return (
    <li data-testid="message" data-role={message.role}>
      {siblings.length > 1 && (
        <span className="meta" data-testid="branches">
          <button
            type="button"
            data-testid="previous"
            disabled={at <= 0}
            onClick={() => props.onSwitch(siblings[at - 1]!)}
          >
            ‹
          </button>
          <span data-testid="branch">
            {at + 1}/{siblings.length}
          </span>
          <button
            type="button"
            data-testid="next"
            disabled={at >= siblings.length - 1}
            onClick={() => props.onSwitch(siblings[at + 1]!)}
          >
            ›
          </button>
        </span>
      )}
      {editing ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            const input = event.currentTarget.elements.namedItem('edit') as HTMLInputElement;
            setEditing(false);
            props.onEdit(input.value);
          }}
        >
          <input name="edit" data-testid="edit-input" defaultValue={text} />
          <button type="submit" data-testid="edit-save">
            Save
          </button>
        </form>
      ) : (
        <span data-testid="text">{text}</span>
      )}
      {message.role === 'user' && !editing && (
        <button type="button" data-testid="edit" onClick={() => setEditing(true)}>
          Edit
        </button>
      )}
      {message.parts
        .filter((part) => part.type === 'tool-weather')
        .map((part) => (
          <ToolCall
            key={(part as WeatherPart).toolCallId}
            part={part as WeatherPart}
            onDecide={props.onDecide}
          />
        ))}
    </li>
  );
}

/** The weather tool's part, in the states the page shows. */
interface WeatherPart {
  toolCallId: string;
  state: string;
  input?: { city?: string };
  output?: unknown;
  approval?: { id: string; approved?: boolean };
}

function ToolCall({
  part,
  onDecide,
}: {
  part: WeatherPart;
  onDecide(id: string, ok: boolean): void;
}) {
  const city = part.input?.city ?? '…';
  if (part.state === 'approval-requested') {
    return (
      <div data-testid="approval">
        Look up the weather in {city}?
        <button
          type="button"
          data-testid="approve"
          onClick={() => onDecide(part.approval!.id, true)}
        >
          Approve
        </button>
        <button type="button" data-testid="deny" onClick={() => onDecide(part.approval!.id, false)}>
          Deny
        </button>
      </div>
    );
  }
  if (part.state === 'approval-responded') {
    return (
      <div data-testid="tool">{part.approval?.approved ? 'Approved' : 'Denied'}; waiting…</div>
    );
  }
  if (part.state === 'output-available') {
    return (
      <div data-testid="tool">
        Weather in {city}: {String(part.output)}
      </div>
    );
  }
  if (part.state === 'output-denied') return <div data-testid="tool">Denied.</div>;
  return <div data-testid="tool">Asking the weather in {city}…</div>;
}

/** The ids of the messages that share `id`'s parent, itself included. */
function siblingsOf(tree: ChatTree | null, id: string): string[] {
  const node = tree?.messages.find((m) => m.message.id === id);
  if (!tree || !node) return [];
  return tree.messages.filter((m) => m.parentId === node.parentId).map((m) => m.message.id);
}

/** The message of an error the server answered with (`{ error }`), or of any other error. */
function readError(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  try {
    return (JSON.parse(text) as { error?: string }).error ?? text;
  } catch {
    return text;
  }
}
