/**
 * A lock that the test runs on one machine share, for the few tests that use what every run
 * sees alike (the servers' default namespaces, which the READMEs' examples write to): a run
 * waits while another run's process holds it. A lock whose process is gone is taken over.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether the process `pid` is alive. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Hold the machine-wide lock `name` until the function returned is called. */
export async function holdRunLock(name: string): Promise<() => void> {
  const dir = join(tmpdir(), `ckpt-test-lock-${name}`);
  const owner = join(dir, 'pid');
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(owner, String(process.pid));
      return () => rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let pid = Number.NaN;
    try {
      pid = Number(readFileSync(owner, 'utf8'));
    } catch {}
    // A holder that died without letting go; a lock just made may not name its holder yet.
    if (Number.isInteger(pid) && !alive(pid)) rmSync(dir, { recursive: true, force: true });
    else await sleep(500);
  }
}
