/**
 * Once a test run, before any test: what the tests run from the sources needs built, and the
 * run's id, which makes the server namespaces of @ckpt/test-stores this run's own. After the
 * last test, those namespaces are removed.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { bundleSqliteWriter, sqliteWriterBundle } from './vitest.aliases.js';

export default async function setup(): Promise<() => Promise<void>> {
  mkdirSync(dirname(sqliteWriterBundle), { recursive: true });
  await bundleSqliteWriter();
  const { startTestRun } = await import('@ckpt/test-stores');
  startTestRun();
  return async () => {
    const { removeRunNamespaces } = await import('@ckpt/test-stores');
    await removeRunNamespaces();
  };
}
