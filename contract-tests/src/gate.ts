/** Capability gates: a case the backend cannot run is skipped with the reason in its title. */
import type { BackendCapabilities } from '@ckpt/core';
import { it } from 'vitest';

type CaseBody = () => Promise<void> | void;
type Register = (name: string, fn: CaseBody, timeout?: number) => void;

/** `it` when `condition` holds, else a skip that gives `reason` in its title. */
export function itIf(condition: boolean, reason: string): Register {
  return (name, fn, timeout) =>
    condition ? it(name, fn, timeout) : it.skip(`${name} [skipped: ${reason}]`, fn, timeout);
}

/** `it` when the backend declares `capability`, else a skip that names the missing capability. */
export function itWith(
  capabilities: BackendCapabilities,
  capability: keyof BackendCapabilities,
): Register {
  return itIf(capabilities[capability], `the backend does not declare ${capability}`);
}
