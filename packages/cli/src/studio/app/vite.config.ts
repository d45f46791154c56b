/**
 * The studio's front end, built into the CLI's `dist/studio` by the package's build: one
 * script and one style sheet with hashed names and no reference to any other host, so that the
 * studio works offline.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../../../dist/studio', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // The page's policy allows only its own scripts: no inline preload helper.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
});
