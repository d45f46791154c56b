/**
 * Core's source is in rooms, and imports between them run one way: the tools are built on the
 * store, the store on the codecs, the adapter contract and the values; the KV and SQL families
 * are built on the adapter contract. The entry points (`index.ts`, `adapter.ts`, `sql/index.ts`) gather
 * the faces and may import any room; no room imports an entry point.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');
const CONTRIBUTING = resolve(SRC, '../../../CONTRIBUTING.md');

/** Each room and the rooms it may import (besides itself). */
const MAY_IMPORT: Record<string, readonly string[]> = {
  values: [],
  codecs: ['values'],
  adapter: ['values'],
  kv: ['adapter', 'values'],
  sql: ['kv', 'adapter', 'values'],
  store: ['codecs', 'adapter', 'values'],
  tools: ['store', 'codecs', 'adapter', 'values'],
};

const ENTRIES = new Set(['index.ts', 'adapter.ts', join('sql', 'index.ts')]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path)] : [];
  });
}

/** The files (relative to src) that `file` imports from core's own source. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|import\(\s*)'(\.{1,2}\/[^']+)'/g)].map(
    (match) => match[1] as string,
  );
  return specifiers.map((specifier) =>
    relative(SRC, resolve(SRC, dirname(file), specifier.replace(/\.js$/, '.ts'))),
  );
}

/** The rooms CONTRIBUTING.md's table names, each with the rooms it says it may import. */
function roomsDocumented(): Record<string, string[]> {
  const rows = readFileSync(CONTRIBUTING, 'utf8').matchAll(
    /^\| `([a-z]+)\/` +\|[^|]*\|([^|]*)\|$/gm,
  );
  return Object.fromEntries(
    [...rows].map(([, room, imports]) => [
      room as string,
      [...(imports as string).matchAll(/`([a-z]+)`/g)].map((match) => match[1] as string).sort(),
    ]),
  );
}

function roomOf(file: string): string | undefined {
  const parts = file.split(sep);
  return parts.length > 1 ? parts[0] : undefined;
}

/** Every import that goes against the direction, as `from -> to`. */
function wrongWay(files: string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    if (ENTRIES.has(file)) continue;
    const room = roomOf(file) as string;
    for (const target of importsOf(file)) {
      const targetRoom = roomOf(target);
      const allowed =
        !ENTRIES.has(target) &&
        targetRoom !== undefined &&
        (targetRoom === room || MAY_IMPORT[room]?.includes(targetRoom));
      if (!allowed) found.push(`${file} -> ${target}`);
    }
  }
  return found;
}

describe('core source layout', () => {
  const files = sourceFiles(SRC);

  it('keeps every file but the entry points in a room', () => {
    const homeless = files.filter((file) => !ENTRIES.has(file) && roomOf(file) === undefined);
    const unknownRooms = files
      .map(roomOf)
      .filter((room): room is string => room !== undefined && !(room in MAY_IMPORT));
    expect(homeless).toEqual([]);
    expect([...new Set(unknownRooms)]).toEqual([]);
  });

  it('is the layout CONTRIBUTING.md describes, room by room', () => {
    const rooms = Object.fromEntries(
      Object.entries(MAY_IMPORT).map(([room, imports]) => [room, [...imports].sort()]),
    );
    expect(roomsDocumented()).toEqual(rooms);
  });

  it('imports only one way: tools, store, then the codecs, the adapter contract and values', () => {
    expect(files.length).toBeGreaterThan(30);
    expect(wrongWay(files)).toEqual([]);
  });
});
