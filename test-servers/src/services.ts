/**
 * Server-backed tests: where each server is, and what happens when it is not there. A server
 * that cannot be reached skips its tests with a loud message, unless CKPT_REQUIRE_SERVICES=1
 * (as in CI), where that is a failure. CKPT_SERVICES=none skips every server's tests without
 * looking for it (`pnpm test:fast`).
 */
import { connect } from 'node:net';

/** The servers adapter tests talk to, with the environment variable and default of each. */
export const SERVICES = {
  postgres: { env: 'CKPT_TEST_POSTGRES_URL', url: 'postgres://postgres@127.0.0.1:5432/test' },
  mysql: { env: 'CKPT_TEST_MYSQL_URL', url: 'mysql://root@127.0.0.1:3306/test' },
  redis: { env: 'CKPT_TEST_REDIS_URL', url: 'redis://127.0.0.1:6379' },
} as const;

/** The URL tests use for `service`: its environment variable, or the local default. */
export function serviceUrl(service: keyof typeof SERVICES): string {
  const { env, url } = SERVICES[service];
  return process.env[env] || url;
}

const DEFAULT_PORTS = { postgres: 5432, mysql: 3306, redis: 6379 } as const;

/** Where `service` listens (host and port of its URL), for tests that point another driver there. */
export function serviceAddress(service: keyof typeof SERVICES): { host: string; port: number } {
  const { hostname, port } = new URL(serviceUrl(service));
  return { host: hostname, port: Number(port || DEFAULT_PORTS[service]) };
}

/**
 * Run `probe` (which should connect and disconnect) and say whether the server is there.
 * When it is not: throws if CKPT_REQUIRE_SERVICES=1, else warns loudly and returns false.
 * False without a probe under CKPT_SERVICES=none.
 */
export async function serviceAvailable(name: string, probe: () => Promise<void>): Promise<boolean> {
  if (process.env.CKPT_SERVICES === 'none') return false;
  try {
    await probe();
    return true;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    if (process.env.CKPT_REQUIRE_SERVICES === '1') {
      throw new Error(
        `${name} is required (CKPT_REQUIRE_SERVICES=1) but cannot be reached: ${reason}`,
      );
    }
    console.warn(`\n!!! ${name} cannot be reached (${reason}); its tests are SKIPPED.\n`);
    return false;
  }
}

/**
 * Whether something accepts TCP connections where `service` listens, for tests that point
 * another driver there; like `serviceAvailable`, a failure under CKPT_REQUIRE_SERVICES=1.
 */
export function serviceListening(service: keyof typeof SERVICES): Promise<boolean> {
  const { host, port } = serviceAddress(service);
  return serviceAvailable(
    `${service} at ${host}:${port}`,
    () =>
      new Promise((resolve, reject) => {
        const socket = connect({ host, port }, () => {
          socket.end();
          resolve();
        });
        socket.on('error', reject);
      }),
  );
}
