/** The demo of examples/demo (`pnpm demo`), run into a store of the caller's. */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

/** Run the demo's story into the store at `url` (it starts afresh each time). */
export function runDemo(url: string): void {
  execFileSync(join(root, 'node_modules/.bin/tsx'), ['src/main.ts'], {
    cwd: join(root, 'examples/demo'),
    env: { ...process.env, CKPT_DEMO_URL: url },
    stdio: 'ignore',
  });
}
