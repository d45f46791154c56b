/**
 * An Agents SDK run end to end on every backend, offline (the SDK's scripted model): a tool
 * call that needs approval stops the run, its state is saved beside the history, and the run
 * is approved and finished in a new process (or, for the in-process stores, a new session).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CkptSession } from '@ckpt/openai-agents';
import { SEALED_STORES, STORES, storesOn } from '@ckpt/test-stores';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { approveAndFinish, ask } from './support/calculator.js';
import { runPhase } from './support/worker.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-agents-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const NAMESPACE = 'oa_agent';

describe.each([...STORES, ...SEALED_STORES])('an agent run on $name', (backend) => {
  const stores = storesOn(backend, NAMESPACE, dir, ['openai-agents']);
  const open = stores.open;
  afterAll(stores.closeAll);
  afterEach(stores.closeOpened);
  const phase = async (name: 'ask' | 'finish', sessionId: string) => {
    // A store that cannot outlive a process "restarts" as a new one on the same data.
    if (backend.outlivesProcess) return runPhase([backend.name, NAMESPACE, dir, name, sessionId]);
    const session = new CkptSession(await open(), { sessionId });
    return name === 'ask' ? ask(session) : approveAndFinish(session);
  };

  it('stops for approval, resumes after a restart, and keeps the whole history', async () => {
    const sessionId = `run-${Date.now()}-${Math.random()}`;
    expect(await phase('ask', sessionId)).toEqual({ interruptions: ['add'] });
    const session = new CkptSession(await open(), { sessionId });
    expect(await session.loadRunState()).toEqual(expect.any(String));
    const finished = (await phase('finish', sessionId)) as { output: string; history: string[] };
    expect(finished.output).toBe('The answer is 5.');
    expect(finished.history).toEqual([
      'user: What is 2 + 3?',
      'function_call add',
      'function_call_result',
      expect.stringMatching(/^assistant: .*The answer is 5\./),
    ]);
    expect(await session.loadRunState()).toBeUndefined();
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
  });
});
