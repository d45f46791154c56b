/** What a third party sees from the package's root: few names, each documented. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, it } from 'vitest';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** The names, values and types alike, that a module exports. */
function exportedNames(file: string): string[] {
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  return checker.getExportsOfModule(module).map((symbol) => symbol.name);
}

it('exports at most 15 names from its root, each named in its README', () => {
  const names = exportedNames(here('../src/index.ts'));
  expect(names.length, names.join(', ')).toBeLessThanOrEqual(15);
  const readme = readFileSync(here('../README.md'), 'utf8');
  expect(names.filter((name) => !readme.includes(`\`${name}`))).toEqual([]);
});
