/** Transcript items seen as messages, whichever framework wrote them, and everything else not. */
import { messageView } from '@ckpt/studio-app/wire';
import { describe, expect, it } from 'vitest';
import { colorsFor } from '../src/io.js';
import { itemLine } from '../src/item-line.js';

const plain = colorsFor({ write: () => {} }, {});
const line = (item: unknown) => itemLine(item, plain);

describe('messageView', () => {
  it('reads { role, text } with a name, an id and tool calls, as @ckpt/langgraph writes them', () => {
    expect(messageView({ role: 'user', text: 'hi', id: 'm1', name: 'ann' })).toEqual({
      role: 'user',
      text: 'hi',
      id: 'm1',
      name: 'ann',
      toolCalls: [],
    });
    const view = messageView({
      role: 'assistant',
      text: '',
      toolCalls: [{ id: 'c1', name: 'weather', args: { city: 'Paris' } }],
    });
    expect(view?.toolCalls).toEqual([{ id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' }]);
    expect(line({ role: 'assistant', text: '', toolCalls: [{ name: 'weather', args: {} }] })).toBe(
      'assistant → weather({})',
    );
    expect(messageView({ role: 'tool', text: '18°C', name: 'weather', toolCallId: 'c1' })).toEqual({
      role: 'tool',
      text: '18°C',
      name: 'weather',
      toolCalls: [],
      toolCallId: 'c1',
    });
    expect(line({ role: 'tool', text: '18°C', name: 'weather', toolCallId: 'c1' })).toBe(
      'tool (weather): 18°C',
    );
  });

  it('reads { role, content } with a string, and Chat Completions tool calls and results', () => {
    expect(line({ role: 'system', content: 'Be brief.' })).toBe('system: Be brief.');
    expect(
      line({
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c', type: 'function', function: { name: 'add', arguments: '{"a":1}' } },
        ],
      }),
    ).toBe('assistant → add({"a":1})');
    expect(messageView({ role: 'tool', content: '2', tool_call_id: 'c' })).toMatchObject({
      role: 'tool',
      text: '2',
      toolCallId: 'c',
    });
  });

  it('reads OpenAI Agents SDK messages, their parts joined, other parts named', () => {
    expect(
      line({
        role: 'user',
        content: [
          { type: 'input_text', text: 'Look:' },
          { type: 'input_image', image: 'x' },
        ],
      }),
    ).toBe('user: Look: [input_image]');
    expect(
      line({
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Hello\nthere' }],
      }),
    ).toBe('assistant: Hello there');
    expect(line({ role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] })).toBe(
      'assistant: No.',
    );
  });

  it('reads Agents SDK function calls and their results as a tool call and a result', () => {
    expect(
      line({
        type: 'function_call',
        callId: 'x',
        name: 'book',
        arguments: '{"table":2}',
        status: 'completed',
      }),
    ).toBe('assistant → book({"table":2})');
    expect(
      messageView({
        type: 'function_call_result',
        callId: 'x',
        name: 'book',
        status: 'completed',
        output: { type: 'text', text: 'booked' },
      }),
    ).toEqual({ role: 'tool', name: 'book', text: 'booked', toolCalls: [], toolCallId: 'x' });
    expect(
      line({
        type: 'function_call_result',
        callId: 'x',
        name: 'book',
        status: 'completed',
        output: 'done',
      }),
    ).toBe('tool (book): done');
  });

  it('reads LangChain messages as serialized, with their tool calls', () => {
    const lc = (kind: string, kwargs: object) => ({
      lc: 1,
      type: 'constructor',
      id: ['langchain_core', 'messages', kind],
      kwargs,
    });
    expect(line(lc('HumanMessage', { content: 'Hi' }))).toBe('user: Hi');
    expect(line(lc('SystemMessage', { content: 'Be kind.' }))).toBe('system: Be kind.');
    expect(
      line(
        lc('AIMessage', {
          content: 'Let me look.',
          tool_calls: [{ name: 'search', args: { q: 'x' }, id: '1' }],
        }),
      ),
    ).toBe('assistant: Let me look. → search({"q":"x"})');
    expect(line(lc('AIMessageChunk', { content: [{ type: 'text', text: 'Done.' }] }))).toBe(
      'assistant: Done.',
    );
    expect(
      messageView(lc('ToolMessage', { content: '42', tool_call_id: '1', name: 'search' })),
    ).toEqual({
      role: 'tool',
      text: '42',
      name: 'search',
      toolCalls: [],
      toolCallId: '1',
    });
    expect(line(lc('ChatMessage', { content: 'x', role: 'critic' }))).toBe('critic: x');
  });

  it('reads AI SDK UIMessages: text parts joined, tool parts as calls', () => {
    expect(
      line({
        id: 'm',
        role: 'assistant',
        parts: [
          { type: 'step-start' },
          { type: 'text', text: 'Checking.' },
          {
            type: 'tool-weather',
            toolCallId: 't',
            state: 'input-available',
            input: { city: 'Oslo' },
          },
        ],
      }),
    ).toBe('assistant: Checking. → weather({"city":"Oslo"})');
  });

  it('takes anything else as no message, shown as its JSON', () => {
    for (const item of [
      'a string',
      42,
      null,
      [1],
      { role: 'user' },
      { role: 3, text: 'x' },
      { text: 'no role' },
      { role: 'user', content: { nested: true } },
      { lc: 1, type: 'constructor', id: ['x', 'Unknown'], kwargs: { content: 'x' } },
      { type: 'function_call' },
    ]) {
      expect(messageView(item), JSON.stringify(item)).toBeNull();
    }
    expect(line({ something: 'else' })).toBe('{"something":"else"}');
    expect(line('a plain\nstring')).toBe('a plain string');
  });
});
