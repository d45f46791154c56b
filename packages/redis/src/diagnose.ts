/** What `diagnose()` finds of a Redis store: the server's persistence and eviction settings. */
import { type Diagnosis, durabilityDiagnosis, SURVIVES_SERVER_CRASH } from '@ckpt/core/adapter';
import { explained, type RedisClient } from './runner.js';

/** The server's persistence and eviction settings, which decide what a resolved call survives. */
export async function diagnose(client: RedisClient): Promise<Diagnosis[]> {
  let settings: Record<string, string>;
  try {
    const flat = (await explained(
      client,
      client.config(
        'GET',
        'appendonly',
        'appendfsync',
        'maxmemory-policy',
        'save',
      ) as Promise<unknown>,
    )) as string[];
    settings = Object.fromEntries(
      Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i]!, flat[2 * i + 1]!]),
    );
  } catch (err) {
    return [
      {
        check: 'durability',
        status: 'warn',
        detail: `the server would not tell its settings (${(err as Error).message}); a managed Redis often disables CONFIG`,
        fix: "check with your provider that persistence is on (appendonly yes) and maxmemory-policy is 'noeviction'",
      },
    ];
  }
  const aof = settings.appendonly === 'yes';
  const fsync = settings.appendfsync;
  const policy = settings['maxmemory-policy'];
  return [
    durabilityDiagnosis({
      settings: aof
        ? `appendonly yes, appendfsync ${fsync}`
        : `appendonly no${settings.save ? `, save "${settings.save}"` : ''}`,
      ok: aof && fsync !== 'no',
      consequence: aof
        ? fsync === 'always'
          ? SURVIVES_SERVER_CRASH
          : fsync === 'everysec'
            ? 'up to about a second of calls may be lost when the machine crashes'
            : 'the operating system decides when calls reach the disk'
        : settings.save
          ? 'a restart goes back to the last snapshot'
          : 'a restart loses every session',
      fix: 'CONFIG SET appendonly yes; CONFIG SET appendfsync everysec (or always), and the same in redis.conf',
    }),
    {
      check: 'eviction',
      status: policy === 'noeviction' ? 'ok' : 'fail',
      detail: `maxmemory-policy ${policy}${policy === 'noeviction' ? '' : ': Redis may delete keys of sessions to free memory, leaving them broken'}`,
      fix: 'CONFIG SET maxmemory-policy noeviction, and the same in redis.conf',
    },
  ];
}
