import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The page is built on its own; the server (src/server.ts) serves dist/ and the chat's API.
export default defineConfig({
  root: fileURLToPath(new URL('./page', import.meta.url)),
  build: { outDir: fileURLToPath(new URL('./dist', import.meta.url)), emptyOutDir: true },
  // The AI SDK's React hooks carry a 'use client' directive that a plain bundle has no use for.
  logLevel: 'error',
});
