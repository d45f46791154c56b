/**
 * An agent run with the SDK's offline scripted model: the model asks for a tool that needs
 * approval, the run stops for it, and after approval (in another process) it answers.
 */
import type { CkptSession } from '@ckpt/openai-agents';
import { Agent, RunState, run, setTracingDisabled, tool } from '@openai/agents-core';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import { z } from 'zod';

setTracingDisabled(true);

const add = tool({
  name: 'add',
  description: 'Add two numbers.',
  parameters: z.object({ a: z.number(), b: z.number() }),
  needsApproval: true,
  execute: async ({ a, b }) => String(a + b),
});

function calculator(model: ScriptedModel) {
  return new Agent({ name: 'calculator', instructions: 'Add numbers.', model, tools: [add] });
}

/** Ask; the run stops at the tool's approval, and its state is saved beside the history. */
export async function ask(session: CkptSession) {
  const model = new ScriptedModel([[functionCall('add', { a: 2, b: 3 }, { callId: 'call-1' })]]);
  const result = await run(calculator(model), 'What is 2 + 3?', { session });
  await session.saveRunState(result.state);
  return { interruptions: result.interruptions.map((i) => i.name) };
}

/** Approve the saved run's tool call and run it to its answer. */
export async function approveAndFinish(session: CkptSession) {
  const model = new ScriptedModel([[assistantMessage('The answer is 5.')]]);
  const agent = calculator(model);
  const saved = await session.loadRunState();
  if (saved === undefined) throw new Error('no saved run state');
  const state = await RunState.fromString(agent, saved);
  for (const interruption of state.getInterruptions()) state.approve(interruption);
  const result = await run(agent, state, { session });
  await session.clearRunState();
  return { output: result.finalOutput, history: describeHistory(await session.getItems()) };
}

/** Each item of a history as its type (or role), with the text of a message. */
export function describeHistory(items: unknown[]) {
  return items.map((item) => {
    const i = item as { type?: string; role?: string; content?: unknown; name?: string };
    if (i.type === 'function_call') return `function_call ${i.name}`;
    if (i.type === 'function_call_result') return 'function_call_result';
    const text = typeof i.content === 'string' ? i.content : JSON.stringify(i.content);
    return `${i.role ?? i.type}: ${text}`;
  });
}
