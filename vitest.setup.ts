/** Once a test run, before any test: what the tests run from the sources needs built. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { bundleSqliteWriter, sqliteWriterBundle } from './vitest.aliases.js';

export default async function setup(): Promise<void> {
  mkdirSync(dirname(sqliteWriterBundle), { recursive: true });
  await bundleSqliteWriter();
}
