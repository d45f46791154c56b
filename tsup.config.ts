import { defineConfig } from 'tsup';

// One build for every published package: run from the package folder with --config. A package
// with several entry points names them on the command line (`--entry.adapter src/adapter.ts`).
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  // Entry points share their modules as chunks, in CommonJS too, so that a class such as
  // CkptError is one class whichever entry it was reached through.
  splitting: true,
  // The declarations name Node.js types (Buffer, NodeJS.ReadableStream): an application whose
  // TypeScript includes no types unless told (`types: []`, the default from TypeScript 6) gets
  // them through this reference, where @types/node is installed.
  dts: { banner: '/// <reference types="node" />' },
  sourcemap: true,
  clean: true,
  target: 'node20',
});
