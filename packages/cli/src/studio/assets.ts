/**
 * The studio's front end: the files the package's build put beside the command (`dist/studio`),
 * read once at start and served from memory. Nothing is fetched from anywhere else, so the
 * studio works offline.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CkptError } from '@ckpt/core';

/** One file of the front end. */
export interface Asset {
  body: Buffer;
  type: string;
  /** Whether its name carries a hash of its content, so that a browser may keep it for good. */
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
};

/** The folder the built front end is in: `studio/` beside the bundle this module was built into. */
export function defaultAssetsDir(): string {
  // The CommonJS build has __dirname; the ES module build has import.meta.url.
  const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
  return join(here, 'studio');
}

/** Every file under `dir`, by the path it is served at (`/index.html`, `/assets/app-1a2b.js`). */
export function loadAssets(dir: string): Map<string, Asset> {
  if (!existsSync(join(dir, 'index.html'))) {
    throw new CkptError(
      'UNSUPPORTED',
      `the studio's front end is not in ${dir}; this copy of @ckpt/cli was built without it (in the ckpt repository, run pnpm build).`,
    );
  }
  const assets = new Map<string, Asset>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const file = join(folder, entry.name);
      if (entry.isDirectory()) walk(file);
      if (!entry.isFile()) continue;
      const path = `/${relative(dir, file).split(sep).join('/')}`;
      const ext = /\.[a-z0-9]+$/i.exec(entry.name)?.[0]?.toLowerCase() ?? '';
      assets.set(path, {
        body: readFileSync(file),
        type: TYPES[ext] ?? 'application/octet-stream',
        immutable: path.startsWith('/assets/'),
      });
    }
  };
  walk(dir);
  return assets;
}
