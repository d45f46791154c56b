/**
 * The studio's page and its server meet at one module, `src/wire.ts`: nothing of the page
 * imports anything outside this package but its own npm dependencies, and nothing of @ckpt/cli
 * imports anything of this package but `@ckpt/studio-app/wire`, which the CLI's build bundles
 * (so it must not reach past this package's own files either).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const APP = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = resolve(APP, '..');
const CLI = join(ROOT, 'packages', 'cli');
const WIRE = join(APP, 'src', 'wire.ts');
const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;

type DependencyField =
  | 'dependencies'
  | 'devDependencies'
  | 'peerDependencies'
  | 'optionalDependencies';
type Manifest = { private?: boolean } & { [field in DependencyField]?: Record<string, string> };
const manifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));

/** The source files under `dir`, leaving out what is installed or built. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.'))
      return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return SOURCE.test(entry.name) ? [path] : [];
  });
}

/** Every module `file` names: static, type-only, re-exported, dynamic and side-effect imports. */
const importsOf = (file: string): string[] =>
  ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((i) => i.fileName);

const inside = (dir: string, path: string) => !relative(dir, path).startsWith(`..${sep}`);
const isRelative = (specifier: string) => /^\.{1,2}\//.test(specifier);
/** The package a bare specifier names: `preact` of `preact/hooks`, `@scope/name` of its subpaths. */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
const isBuiltin = (specifier: string) =>
  specifier.startsWith('node:') || builtinModules.includes(specifier);

/** Each import of a file in `files` that `allowed` refuses, as `file: specifier`. */
function refused(files: string[], allowed: (specifier: string, file: string) => boolean) {
  return files.flatMap((file) =>
    importsOf(file)
      .filter((specifier) => !allowed(specifier, file))
      .map((specifier) => `${relative(ROOT, file)}: ${specifier}`),
  );
}

describe("the studio's page and its server", () => {
  it('the page imports its own files and its own npm dependencies, nothing else', () => {
    const own = manifest(APP);
    const deps = new Set([
      ...Object.keys(own.dependencies ?? {}),
      ...Object.keys(own.devDependencies ?? {}),
    ]);
    const page = sourceFiles(join(APP, 'src'));
    // The build's configuration and the tests run in node, with the workspace's test tools.
    const tooling = [join(APP, 'vite.config.ts'), ...sourceFiles(join(APP, 'test'))];
    expect(page).toContain(WIRE);
    const stays = (specifier: string, file: string) =>
      isRelative(specifier)
        ? inside(APP, resolve(dirname(file), specifier))
        : deps.has(packageOf(specifier));
    expect(refused(page, stays)).toEqual([]);
    expect(
      refused(
        tooling,
        (specifier, file) =>
          stays(specifier, file) ||
          isBuiltin(specifier) ||
          ['vitest', 'typescript'].includes(specifier),
      ),
    ).toEqual([]);
  });

  it('@ckpt/cli imports nothing of the page but its wire module', () => {
    const files = sourceFiles(CLI);
    const wireImports = files.filter((file) => importsOf(file).includes('@ckpt/studio-app/wire'));
    expect(wireImports.length).toBeGreaterThan(0);
    expect(
      refused(files, (specifier, file) =>
        isRelative(specifier)
          ? !inside(APP, resolve(dirname(file), specifier))
          : packageOf(specifier) !== '@ckpt/studio-app' || specifier === '@ckpt/studio-app/wire',
      ),
    ).toEqual([]);
  });

  it("the wire module, which the CLI's build bundles, imports no package and only message-view.ts", () => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const specifier of importsOf(file)) {
        expect(isRelative(specifier), `${relative(APP, file)}: ${specifier}`).toBe(true);
        visit(resolve(dirname(file), specifier).replace(/\.js$/, '.ts'));
      }
    };
    visit(WIRE);
    expect([...seen].map((file) => relative(APP, file)).sort()).toEqual([
      join('src', 'message-view.ts'),
      join('src', 'wire.ts'),
    ]);
  });

  it('the published CLI does not depend on this private package: a development dependency only', () => {
    const own = manifest(APP);
    expect(own.private).toBe(true);
    const cli = manifest(CLI);
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'] as const) {
      expect(Object.keys(cli[field] ?? {}), field).not.toContain('@ckpt/studio-app');
    }
    expect(cli.devDependencies?.['@ckpt/studio-app']).toBe('workspace:*');
  });
});
