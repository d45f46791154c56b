/**
 * What callers used to read off `store.backend`, from the store itself: its name, its
 * capabilities, and its deployment checks, which run as every other call of the store does
 * (refused once it is closed, a driver failure wrapped as BACKEND with the backend's hint).
 */
import { memory, memoryKv } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';
import {
  type CheckpointBackend,
  CheckpointStore,
  type Diagnosis,
  kvBackend,
} from '../src/index.js';

const finding: Diagnosis = { check: 'schema', status: 'ok', detail: 'version 1' };

/** `backend` with `diagnose` replaced by `diagnose` (absent when undefined). */
function withDiagnose(
  backend: CheckpointBackend,
  diagnose: (() => Promise<Diagnosis[]>) | undefined,
): CheckpointBackend {
  return Object.assign(Object.create(backend), { diagnose });
}

describe('CheckpointStore: facts about its backend', () => {
  it('names its backend and says what it can do', () => {
    const native = new CheckpointStore(memory());
    expect(native.backendName).toBe('memory');
    expect(native.capabilities).toEqual({
      concurrentWriters: true,
      listSessions: true,
      listStateKeys: true,
      watch: true,
      tags: true,
    });
    const { get, set, delete: remove } = memoryKv();
    const minimal = new CheckpointStore(kvBackend({ get, set, delete: remove }));
    expect(minimal.capabilities.listSessions).toBe(false);
    expect(minimal.capabilities.listStateKeys).toBe(false);
  });

  it("returns the backend's findings, and [] from a backend with no checks", async () => {
    const checked = new CheckpointStore(withDiagnose(memory(), async () => [finding]));
    expect(await checked.diagnose()).toEqual([finding]);
    const unchecked = new CheckpointStore(withDiagnose(memory(), undefined));
    expect(await unchecked.diagnose()).toEqual([]);
  });

  it('refuses to diagnose once closed', async () => {
    let called = false;
    const store = new CheckpointStore(
      withDiagnose(memory(), async () => {
        called = true;
        return [finding];
      }),
    );
    await store.close();
    await expect(store.diagnose()).rejects.toMatchObject({ code: 'CLOSED' });
    expect(called).toBe(false);
  });

  it('wraps a failing check as BACKEND, with the cause and the backend hint', async () => {
    const cause = new Error('permission denied for schema ckpt');
    const backend = Object.assign(
      withDiagnose(memory(), async () => {
        throw cause;
      }),
      { errorHint: () => 'grant the role USAGE on the schema' },
    );
    const err = await new CheckpointStore(backend).diagnose().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'BACKEND', cause });
    expect((err as Error).message).toMatch(/grant the role USAGE/);
  });
});
