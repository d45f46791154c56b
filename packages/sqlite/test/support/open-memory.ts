/** Run in a child process: open an in-memory store and print the error it meets, as JSON. */
import { sqlite, sqliteKv } from '@ckpt/sqlite';

for (const open of [() => sqlite({ path: ':memory:' }), () => sqliteKv({ path: ':memory:' })]) {
  try {
    open();
    console.log(JSON.stringify({ opened: true }));
  } catch (err) {
    const { code, message, details } = err as { code?: string; message: string; details?: object };
    console.log(JSON.stringify({ code, message, details }));
  }
}
