import { defineConfig } from 'tsup';

// One build for every published package: run from the package folder with --config.
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
});
