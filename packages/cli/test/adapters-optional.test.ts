/**
 * The command opens whichever backend a URL names, through the adapter installed beside it: each
 * adapter is a peer the user installs for the backends they open, so every one is optional
 * (npm installs a peer that is not, and with it that backend's driver).
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  peerDependencies: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

it('marks every adapter it can open as an optional peer', () => {
  const peers = Object.keys(manifest.peerDependencies);
  expect(peers.length).toBeGreaterThanOrEqual(5);
  expect(peers.filter((peer) => manifest.peerDependenciesMeta?.[peer]?.optional !== true)).toEqual(
    [],
  );
});
