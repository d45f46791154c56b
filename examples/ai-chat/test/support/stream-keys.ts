/** The Redis keys a test's resumable streams leave (each otherwise kept for a day). */
import { Redis } from 'ioredis';

/** Remove the keys under `keyPrefix` (the prefix the test's servers were given). */
export async function removeStreamKeys(redisUrl: string, keyPrefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    const keys = await redis.keys(`${keyPrefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}
