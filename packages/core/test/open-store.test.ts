import { describe, expect, it } from 'vitest';
import { CheckpointStore, isCkptError, openStore } from '../src/index.js';

async function refusal(promise: Promise<unknown>) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isCkptError(err)).toBe(true);
  return err as Error & { code: string };
}

describe('openStore', () => {
  it('opens a memory store', async () => {
    const store = await openStore('memory:');
    expect(store).toBeInstanceOf(CheckpointStore);
    await store.checkpoint('s', { ok: true });
    expect((await store.load('s'))?.data).toEqual({ ok: true });
    await store.close();
  });

  it('passes the namespace query parameter to the backend', async () => {
    const store = await openStore('memory:?namespace=agents_2');
    expect((store.backend as unknown as { namespace: string }).namespace).toBe('agents_2');
  });

  it('refuses an invalid namespace', async () => {
    const err = await refusal(openStore('memory:?namespace=Bad-Name'));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toMatch(/namespace/);
  });

  it('refuses an unknown scheme, listing the known ones, without echoing a password', async () => {
    const err = await refusal(openStore('mongodb://user:topsecret@host/db'));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toMatch(/memory:, sqlite:/);
    expect(err.message).not.toContain('topsecret');
  });

  it('names the package to install when a backend package is missing', async () => {
    const err = await refusal(openStore('mysql://root@127.0.0.1:3306/test'));
    expect(err.code).toBe('UNSUPPORTED');
    expect(err.message).toContain('npm install @ckpt/mysql mysql2');
  });

  it('applies store options', async () => {
    const store = await openStore('memory:', { maxPayloadBytes: 10 });
    const err = await refusal(store.checkpoint('s', 'x'.repeat(20)));
    expect(err.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
