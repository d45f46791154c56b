/** `openAdapter`: the prologue every adapter opens with. */
import { describe, expect, it } from 'vitest';
import { openAdapter } from '../src/adapter.js';

describe('openAdapter(migrate, close)', () => {
  it('starts the migration at once, as the adapter opens', () => {
    let started = false;
    openAdapter(
      () => {
        started = true;
      },
      () => {},
    );
    expect(started).toBe(true);
  });

  it('closes only once the migration has settled, and only once however often called', async () => {
    let finish = () => {};
    const events: string[] = [];
    const opening = openAdapter(
      () =>
        new Promise<void>((resolve) => {
          finish = () => {
            events.push('migrated');
            resolve();
          };
        }),
      () => {
        events.push('closed');
      },
    );
    const closing = [opening.close(), opening.close()];
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(events).toEqual([]);
    finish();
    await Promise.all(closing);
    await opening.close();
    expect(events).toEqual(['migrated', 'closed']);
  });

  it('reports a failed migration to ready(), still closes, and leaves no unhandled rejection', async () => {
    let closed = false;
    const refused = new Error('refused');
    const opening = openAdapter(
      () => {
        throw refused;
      },
      () => {
        closed = true;
      },
    );
    await expect(opening.ready()).rejects.toBe(refused);
    await opening.close();
    expect(closed).toBe(true);
  });
});
