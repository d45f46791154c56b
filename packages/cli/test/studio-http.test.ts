/**
 * `ckpt studio` over HTTP, as the built command serves it: who it answers (the token, its own
 * host names, its own page for changes), where it listens, that its API answers what the
 * command prints with --json, that a bad request changes nothing, and that the store's URL
 * never leaves it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CheckpointStore, encrypt, openStore } from '@ckpt/core';
import { serviceUrl } from '@ckpt/test-servers';
import { emptyStore, URL_STORES } from '@ckpt/test-stores';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { redactor, STATUS } from '../src/studio/errors.js';
import { hostWarning } from '../src/studio/host-warning.js';
import { buildCli, CKPT, ckpt } from './support/binary.js';
import { openEvents } from './support/event-stream.js';
import { FILLED_IDS, FILLED_SCOPES, fill } from './support/store-fill.js';
import { type StudioProcess, startStudio } from './support/studio.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-studio-http-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(buildCli, 300_000);

/** An answer: status, headers, body text, and the body as JSON when it is JSON. */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

/** Send one request to `origin` with exactly the headers given (Host included). */
function send(
  origin: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  const url = new URL(path, origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A client of one studio: with its token (as the cookie its first visit sets) unless told not to. */
function client(studio: Pick<StudioProcess, 'origin' | 'port' | 'token'>) {
  const cookie = `ckpt_studio_${studio.port}=${studio.token}`;
  const own = { 'x-ckpt-studio': '1', origin: studio.origin, 'content-type': 'application/json' };
  return {
    get: (path: string, headers: Record<string, string> = { cookie }) =>
      send(studio.origin, 'GET', path, headers),
    /** A change as the studio's own page sends it (or with `headers` instead). */
    change: (
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = { cookie, ...own },
    ) =>
      send(
        studio.origin,
        method,
        path,
        headers,
        body === undefined ? undefined : JSON.stringify(body),
      ),
    cookie,
    own,
  };
}

/** The API path of a session's route. */
const at = (id: string, rest = '') => `/api/sessions/${encodeURIComponent(id)}${rest}`;

/** The address a socket listens on, from the kernel's table of TCP sockets (Linux). */
function listeningAddress(port: number): string | null {
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let table: string;
    try {
      table = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of table.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (local === undefined || state !== '0A') continue;
      const [hexIp, hexPort] = local.split(':');
      if (Number.parseInt(hexPort!, 16) !== port) continue;
      if (hexIp!.length === 8) {
        return hexIp!
          .match(/../g)!
          .reverse()
          .map((h) => Number.parseInt(h, 16))
          .join('.');
      }
      return hexIp!;
    }
  }
  return null;
}

describe('ckpt studio over HTTP', () => {
  const url = `sqlite:${join(dir, 'http.db')}`;
  let store: CheckpointStore;
  let readOnly: StudioProcess;
  let writable: StudioProcess;

  beforeAll(async () => {
    store = await openStore(url);
    await fill(store);
    // The read-only one polls an hour apart, so that what its event streams send came by the
    // store's watch.
    [readOnly, writable] = await Promise.all([
      startStudio(url, ['--poll', '1h']),
      startStudio(url, ['--write']),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([readOnly?.stop(), writable?.stop()]);
    await store.close();
  });

  /** What a change could have touched: every session's summary and the state. */
  const snapshot = async () => ({
    sessions: await store.sessions({ limit: 100 }),
    state: await store.state('prefs').get('k'),
  });

  it('prints an address on the loopback with a token of its own, and listens there only', async () => {
    expect(readOnly.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/);
    expect(readOnly.token).not.toBe(writable.token);
    expect(listeningAddress(readOnly.port)).toBe('127.0.0.1');
    await vi.waitFor(() =>
      expect(readOnly.stderr()).toMatch(/read-only \(start with --write to allow changes\)/),
    );
    expect(readOnly.stderr()).not.toMatch(/warning/);
  });

  it('answers 401 without the token, with a JSON error UNAUTHORIZED and nothing of the store', async () => {
    const c = client(readOnly);
    for (const path of [
      '/',
      '/sessions/main',
      at('main', '/tree'),
      '/api/sessions',
      '/api/state',
    ]) {
      const tries: Record<string, string>[] = [
        {},
        { cookie: `ckpt_studio_${readOnly.port}=wrong` },
        { authorization: 'Bearer wrong' },
        { cookie: `ckpt_studio_${writable.port}=${writable.token}` },
      ];
      for (const headers of tries) {
        const answer = await c.get(path, headers);
        expect(answer.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(answer.headers['www-authenticate']).toBe('Bearer realm="ckpt studio"');
        expect(answer.json).toEqual({
          error: { code: 'UNAUTHORIZED', message: expect.stringMatching(/no valid token/) },
        });
        expect(answer.text).not.toContain('main');
      }
    }
  });

  it('shows a browser that opens a page without the token how to get in, and its API calls the JSON error', async () => {
    const c = client(readOnly);
    // The Accept header of Chromium opening a page.
    const navigation = {
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    };
    for (const path of ['/', '/sessions/main', '/state/prefs']) {
      const answer = await c.get(path, navigation);
      expect(answer.status, path).toBe(401);
      expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(answer.headers['content-security-policy']).toMatch(/default-src 'none'/);
      expect(answer.text).toMatch(/Open the address that <code>ckpt studio<\/code> printed/);
      expect(answer.text).toMatch(/new each time <code>ckpt studio<\/code> starts/);
      expect(answer.text).not.toContain('main');
    }
    const api = await c.get('/api/sessions', navigation);
    expect(api.status).toBe(401);
    expect(api.json).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    // What the studio's page sends, once its token is gone (a restart on the same port).
    const fetched = await c.get('/api/studio', { accept: 'application/json' });
    expect(fetched.json).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
  });

  it('keeps the token of the first visit in an HttpOnly, SameSite=Strict cookie and takes it out of the address', async () => {
    const first = await send(readOnly.origin, 'GET', `/?token=${readOnly.token}`);
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe('/');
    expect(first.headers['set-cookie']).toEqual([
      `ckpt_studio_${readOnly.port}=${readOnly.token}; HttpOnly; SameSite=Strict; Path=/`,
    ]);
    const page = await client(readOnly).get('/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toMatch(
      /default-src 'none'; script-src 'self'/,
    );
    expect(page.headers['x-frame-options']).toBe('DENY');
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.text)![1]!;
    const asset = await client(readOnly).get(script);
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/^text\/javascript/);
    // The token also works as a bearer token, for scripts.
    const api = await send(readOnly.origin, 'GET', '/api/studio', {
      authorization: `Bearer ${readOnly.token}`,
    });
    expect(api.json).toMatchObject({ backend: 'sqlite', write: false });
  });

  it('refuses a request under a host name other than its own, token or not', async () => {
    const c = client(readOnly);
    const answer = await c.get('/api/sessions', {
      cookie: c.cookie,
      host: `attacker.example:${readOnly.port}`,
    });
    expect(answer.status).toBe(403);
    expect(answer.json).toMatchObject({ error: { code: 'FORBIDDEN' } });
    expect(answer.text).not.toContain('main');
    expect(
      (await c.get('/api/studio', { cookie: c.cookie, host: `localhost:${readOnly.port}` })).status,
    ).toBe(200);
  });

  it('refuses a change from another origin or without its header, and writes nothing', async () => {
    const c = client(writable);
    const before = await snapshot();
    const attempts: Record<string, string>[] = [
      { ...c.own, cookie: c.cookie, origin: 'http://attacker.example' },
      { ...c.own, cookie: c.cookie, origin: `http://127.0.0.1:${readOnly.port}` },
      { cookie: c.cookie, origin: c.own.origin, 'content-type': 'application/json' },
      { cookie: c.cookie, 'x-ckpt-studio': '1', 'content-type': 'application/json' },
      { cookie: c.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    ];
    for (const headers of attempts) {
      for (const [method, path, body] of [
        ['POST', at('main', '/rollback'), { seq: 6 }],
        ['DELETE', at('main-fork')],
        ['POST', '/api/state/prefs/keys/k', { value: 'changed' }],
      ] as const) {
        const answer = await c.change(method, path, body, headers);
        expect(answer.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(403);
        expect(answer.json).toMatchObject({ error: { code: 'FORBIDDEN' } });
      }
    }
    const originless = await c.change('DELETE', at('main-fork'), undefined, {
      cookie: c.cookie,
      'x-ckpt-studio': '1',
    });
    expect(originless.json).toMatchObject({
      error: {
        message: expect.stringMatching(/, and this one has no Origin; nothing was changed/),
      },
    });
    expect(await snapshot()).toEqual(before);
  });

  it('refuses every change when started without --write, and writes nothing', async () => {
    const c = client(readOnly);
    const before = await snapshot();
    for (const [method, path, body] of [
      ['POST', at('main', '/rollback'), { seq: 6 }],
      ['POST', at('main', '/fork'), { newId: 'never' }],
      ['POST', at('main', '/prune'), { keepLast: 1 }],
      ['DELETE', at('main-fork')],
      ['POST', '/api/state/prefs/keys/k', { value: 'changed' }],
      ['DELETE', '/api/state/prefs/keys/k'],
    ] as const) {
      const answer = await c.change(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.json).toEqual({
        error: {
          code: 'FORBIDDEN',
          message: expect.stringMatching(/read-only; start it with ckpt studio --write/),
        },
      });
    }
    // Said first, whatever else the request lacks: no header or origin would make it go.
    const bare = await c.change('POST', at('main', '/rollback'), { seq: 6 }, { cookie: c.cookie });
    expect(bare.status).toBe(403);
    expect(bare.json).toMatchObject({
      error: { code: 'FORBIDDEN', message: expect.stringMatching(/read-only/) },
    });
    expect(await snapshot()).toEqual(before);
    expect(await store.info('never')).toBeNull();
  });

  it('answers a bad request with a JSON error carrying the CkptError code, and changes nothing', async () => {
    const c = client(writable);
    const before = await snapshot();
    const cases: [Promise<Answer>, number, string][] = [
      [c.change('POST', at('main', '/rollback'), { seq: 'x' }), 400, 'INVALID_ARGUMENT'],
      [c.change('POST', at('main', '/rollback'), { seq: 999 }), 404, 'NOT_FOUND'],
      [c.change('POST', at('main', '/rollback'), { seq: 6, expectedHead: 3 }), 409, 'CONFLICT'],
      [c.change('POST', at('main', '/fork'), { newId: 'main-fork' }), 409, 'CONFLICT'],
      [c.change('POST', at('main', '/prune'), { keepLast: 0 }), 400, 'INVALID_ARGUMENT'],
      [c.change('POST', at('nobody', '/rollback'), { seq: 1 }), 404, 'NOT_FOUND'],
      [c.change('DELETE', at('nobody')), 404, 'NOT_FOUND'],
      [c.change('POST', '/api/state/prefs/keys/k', {}), 400, 'INVALID_ARGUMENT'],
      [c.change('PUT', '/api/state/prefs/keys/k', { value: 1 }), 404, 'NOT_FOUND'],
      [
        send(
          writable.origin,
          'POST',
          at('main', '/rollback'),
          { cookie: c.cookie, ...c.own },
          '{seq:',
        ),
        400,
        'INVALID_ARGUMENT',
      ],
      [c.get(at('nobody', '/tree')), 404, 'NOT_FOUND'],
      [c.get(at('main', '?seq=1')), 404, 'NOT_FOUND'],
      [c.get(at('main', '?seq=-1')), 400, 'INVALID_ARGUMENT'],
      [c.get('/api/sessions?limit=0'), 400, 'INVALID_ARGUMENT'],
      [c.get('/api/sessions?cursor=forged'), 400, 'INVALID_ARGUMENT'],
      [c.get('/api/sessions/%E0%A4%A'), 400, 'INVALID_ARGUMENT'],
      [c.get('/api/nothing'), 404, 'NOT_FOUND'],
    ];
    for (const [answer, status, code] of cases) {
      const { status: got, json } = await answer;
      expect({ status: got, json }).toEqual({
        status,
        json: { error: { code, message: expect.any(String) } },
      });
    }
    expect(await snapshot()).toEqual(before);
  });

  it('answers each read with what the command prints with --json, for every kind of id', async () => {
    const c = client(readOnly);
    const cli = async (...args: string[]) => {
      const run = await ckpt(['--store', url, ...args, '--json']);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
      return JSON.parse(run.stdout);
    };
    expect((await c.get('/api/sessions')).json).toEqual(await cli('sessions'));
    expect((await c.get('/api/sessions?limit=2')).json).toEqual(
      await cli('sessions', '--limit', '2'),
    );
    for (const id of ['main', 'main-fork']) {
      expect((await c.get(at(id))).json, id).toEqual(await cli('show', id));
      expect((await c.get(at(id, '/tree'))).json, id).toEqual(await cli('tree', id));
      expect((await c.get(at(id, '/history'))).json, id).toEqual(await cli('history', id));
      expect((await c.get(at(id, '/transcript'))).json, id).toEqual(await cli('transcript', id));
    }
    // Ids with characters that a path must escape reach the same session.
    for (const id of FILLED_IDS.slice(2)) {
      expect((await c.get(at(id, '/tree'))).json, id).toEqual(await cli('tree', id));
    }
    expect((await c.get(at('main-fork', '?seq=3'))).json).toEqual(
      await cli('show', 'main-fork', '--seq', '3'),
    );
    for (const scope of FILLED_SCOPES) {
      const keys = `/api/state/${encodeURIComponent(scope)}/keys`;
      expect((await c.get(keys)).json).toEqual(await cli('state', scope, 'keys'));
      expect((await c.get(`${keys}/k`)).json).toEqual(await cli('state', scope, 'get', 'k'));
      expect((await c.get(`/api/state/${encodeURIComponent(scope)}/entries`)).json).toEqual({
        items: [
          { key: 'b', value: [1, 2] },
          { key: 'k', value: { scope } },
        ],
        cursor: null,
      });
    }
    expect((await c.get('/api/state')).json).toEqual({
      items: [...FILLED_SCOPES].sort(),
      cursor: null,
    });
  });

  it("gives a session's shape in runs and its checkpoints' times and metadata as asked, as the tree has them, following changes made elsewhere", async () => {
    const c = client(readOnly);
    /** What the tree says of each checkpoint, and the same read from the shape and the details. */
    const both = async (id: string) => {
      const tree = (await c.get(at(id, '/tree'))).json as {
        checkpoints: (Record<string, unknown> & { seq: number })[];
      };
      const shape = (await c.get(at(id, '/topology'))).json as {
        info: { head: number };
        runs: {
          seq: number;
          length: number;
          parent: number | null;
          parentMissing: boolean;
          active: boolean;
        }[];
        forks: Record<string, string[]>;
        pinned: number[];
      };
      const seqs = tree.checkpoints.map((n) => n.seq);
      const details = (await c.get(at(id, `/checkpoints?seqs=${[...seqs, 999].join(',')}`)))
        .json as { seq: number; createdAt: string; metadata: unknown }[];
      const fromShape = shape.runs.flatMap((run) =>
        Array.from({ length: run.length }, (_, i) => ({
          seq: run.seq + i,
          parent: i === 0 ? run.parent : run.seq + i - 1,
          active: run.active,
          head: run.seq + i === shape.info.head,
          forks: shape.forks[run.seq + i] ?? [],
          parentMissing: i === 0 && run.parentMissing,
          pinned: shape.pinned.includes(run.seq + i),
        })),
      );
      return {
        // The shape names the pinned checkpoints; their notes are the tree's alone.
        tree: tree.checkpoints.map(({ pinNote: _, ...n }) => n),
        shape: fromShape.map((n, i) => ({ ...n, ...details[i] })),
        runs: shape.runs.length,
      };
    };
    for (const id of ['main', 'main-fork']) {
      const { tree, shape } = await both(id);
      expect(shape, id).toEqual(tree);
    }
    // A line of checkpoints is one run; a change made by another process shows at once.
    for (let i = 1; i <= 20; i++) await store.checkpoint('shape', { i }, { metadata: { i } });
    expect((await both('shape')).runs).toBe(1);
    await store.rollback('shape', 10);
    await store.checkpoint('shape', { i: 21 }, { metadata: { i: 21 } });
    const changed = await both('shape');
    expect(changed.shape).toEqual(changed.tree);
    expect(changed.tree).toHaveLength(21);
    expect(changed.runs).toBe(3);
    // A pin changes no session summary, and still shows at once.
    await store.pin('shape', 5);
    const pinned = await both('shape');
    expect(pinned.shape).toEqual(pinned.tree);
    expect(pinned.tree.find((n) => n.seq === 5)).toMatchObject({ pinned: true });
    expect((await c.get(at('shape', '/checkpoints?seqs=x'))).status).toBe(400);
    expect((await c.get(at('shape', '/checkpoints'))).status).toBe(400);
    await store.delete('shape');
  });

  it('gives the changes between two checkpoints as paths added, removed and changed', async () => {
    const c = client(readOnly);
    // main-fork: 1-2-3-4-5-6 (head) and 4-7, as fill() writes it.
    expect((await c.get(at('main-fork', '/diff?to=5'))).json).toEqual([
      { path: 'data.step', op: 'change', before: 4, after: 5 },
      { path: 'metadata.step', op: 'change', before: 4, after: 5 },
    ]);
    expect((await c.get(at('main-fork', '/diff?to=6'))).json).toEqual([
      {
        path: 'data',
        op: 'change',
        before: (await store.load('main-fork', 5))!.data,
        after: 'after the fork',
      },
      { path: 'metadata.step', op: 'remove', before: 5 },
    ]);
    expect((await c.get(at('main-fork', '/diff?to=7&from=6'))).json).toEqual([
      { path: 'data', op: 'change', before: 'after the fork', after: 'another way' },
    ]);
    expect((await c.get(at('main-fork', '/diff?to=1'))).json).toEqual([
      { path: 'data', op: 'add', after: (await store.load('main-fork', 1))!.data },
      { path: 'metadata', op: 'add', after: { step: 1 } },
    ]);
  });

  it('makes each change from its own page with --write, answering what the command answers', async () => {
    const c = client(writable);
    expect(
      (await c.change('POST', at('main-fork', '/rollback'), { seq: 4, expectedHead: 6 })).json,
    ).toEqual({
      sessionId: 'main-fork',
      head: 4,
      previousHead: 6,
    });
    expect(await store.head('main-fork')).toBe(4);
    expect(
      (await c.change('POST', at('main-fork', '/fork'), { atSeq: 3, newId: 'studio-fork' })).json,
    ).toEqual({
      sessionId: 'studio-fork',
      forkedFrom: { sessionId: 'main-fork', seq: 3 },
    });
    expect(await store.history('studio-fork')).toEqual([1, 2, 3]);
    expect((await c.change('POST', at('studio-fork', '/prune'), { keepLast: 1 })).json).toEqual({
      sessionId: 'studio-fork',
      removed: 2,
    });
    expect((await c.change('DELETE', at('studio-fork'))).json).toEqual({
      sessionId: 'studio-fork',
      deleted: true,
    });
    expect(await store.info('studio-fork')).toBeNull();
    expect(
      (await c.change('POST', '/api/state/studio/keys/theme', { value: { dark: true } })).json,
    ).toEqual({
      scope: 'studio',
      key: 'theme',
      set: true,
    });
    expect(await store.state('studio').get('theme')).toEqual({ dark: true });
    expect((await c.change('DELETE', '/api/state/studio/keys/theme')).json).toEqual({
      scope: 'studio',
      key: 'theme',
      deleted: true,
    });
    expect(await store.state('studio').get('theme')).toBeUndefined();
    await store.rollback('main-fork', 6);
  });

  it('sends an event when a watched session changes, and a first one at once', async () => {
    // The read-only studio polls an hour apart: the event comes by the store's watch.
    const events = await openEvents(readOnly.origin, readOnly.token, '/api/events?session=main');
    const first = await events.next();
    expect(first).toMatchObject({ event: 'session', data: { sessionId: 'main', head: 7 } });
    await store.checkpoint('main', { from: 'another process' });
    expect(await events.next()).toMatchObject({
      event: 'session',
      data: { sessionId: 'main', head: 8 },
    });
    await events.close();
  });

  it('filters the catalog and its events by tags, as ckpt sessions --where does', async () => {
    const c = client(readOnly);
    const where = (...tags: string[]) =>
      tags.map((tag) => `where=${encodeURIComponent(tag)}`).join('&');
    const ids = (answer: Answer) =>
      (answer.json as { items: { sessionId: string }[] }).items.map((s) => s.sessionId);
    await store.checkpoint('tagged-1', 1, { tags: { user: 'ann', status: 'open' } });
    await store.checkpoint('tagged-2', 1, { tags: { user: 'ann', status: 'done' } });
    await store.checkpoint('tagged-3', 1, { tags: { user: 'ann', status: 'open', note: 'a=b c' } });
    const open = await c.get(`/api/sessions?${where('user=ann', 'status=open')}`);
    const cli = await ckpt([
      '--store',
      url,
      'sessions',
      '--where',
      'user=ann',
      '--where',
      'status=open',
      '--json',
    ]);
    expect(open.json).toEqual(JSON.parse(cli.stdout));
    expect(ids(open)).toEqual(['tagged-3', 'tagged-1']);
    expect(ids(await c.get(`/api/sessions?${where('note=a=b c')}`))).toEqual(['tagged-3']);
    expect(ids(await c.get(`/api/sessions?prefix=tagged-2&${where('user=ann')}`))).toEqual([
      'tagged-2',
    ]);
    // A cursor goes on within the tags it was made with.
    const first = (await c.get(`/api/sessions?limit=2&${where('user=ann')}`)).json as {
      cursor: string;
    };
    const next = await c.get(
      `/api/sessions?limit=2&cursor=${encodeURIComponent(first.cursor)}&${where('user=ann')}`,
    );
    expect(ids(next)).toEqual(['tagged-1']);
    expect((await c.get(`/api/sessions?cursor=${encodeURIComponent(first.cursor)}`)).status).toBe(
      400,
    );
    for (const bad of [['user'], ['bad key=x'], ['user=ann', 'user=bob'], ['user=a\0b']]) {
      for (const path of ['/api/sessions', '/api/events']) {
        const refused = await c.get(`${path}?${where(...bad)}`);
        expect(refused.status, `${path} ${bad}`).toBe(400);
        expect(refused.json).toMatchObject({
          error: { code: 'INVALID_ARGUMENT', message: expect.stringMatching(/where/) },
        });
      }
    }

    // The events of a filtered catalog: its newest session with the tags, and a change to one
    // without them sends nothing.
    const events = await openEvents(
      readOnly.origin,
      readOnly.token,
      `/api/events?${where('status=open', 'user=ann')}`,
    );
    expect(await events.next()).toMatchObject({
      event: 'catalog',
      data: { top: { sessionId: 'tagged-3', tags: { status: 'open', user: 'ann' } } },
    });
    await store.checkpoint('tagged-2', 2);
    await store.checkpoint('tagged-1', 2);
    expect(await events.next()).toMatchObject({
      event: 'catalog',
      data: { top: { sessionId: 'tagged-1', head: 2 } },
    });
    await events.close();
    for (const id of ['tagged-1', 'tagged-2', 'tagged-3']) await store.delete(id);
  });

  it('refuses a --poll without a unit, before it listens', async () => {
    const run = await ckpt(['--store', url, 'studio', '--port', '0', '--poll', '5']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('poll must be a whole number with a unit');
    expect(run.stdout).toBe('');
  });

  it('warns of an address other machines can reach, below the address, and not of a loopback one', () => {
    expect(hostWarning('0.0.0.0', 4280, false)).toBe(
      "warning: listening on every address of this machine as --host asks, not on 127.0.0.1 alone: anyone who can reach port 4280 there and has the token (in the address above) can read the store. From another machine, open the address above with this machine's name or address in place of 127.0.0.1.",
    );
    expect(hostWarning('192.168.1.20', 4280, true)).toBe(
      'warning: listening on 192.168.1.20 as --host asks, not on 127.0.0.1 alone: anyone who can reach port 4280 there and has the token (in the address above) can read the store and change it.',
    );
    for (const loopback of ['127.0.0.1', '127.0.0.2', 'localhost', '::1', '[::1]']) {
      expect(hostWarning(loopback, 4280, true), loopback).toBeNull();
    }
  });

  it('listens on another address only when told to with --host', async () => {
    // stdout and stderr in one file, in the order a terminal shows them.
    const out = join(dir, 'host.out');
    const fd = openSync(out, 'w');
    const child = spawn(
      process.execPath,
      [CKPT, '--store', url, 'studio', '--port', '0', '--host', '127.0.0.2'],
      { stdio: ['ignore', fd, fd] },
    );
    closeSync(fd);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const lines = await vi.waitFor(
        () => {
          const text = readFileSync(out, 'utf8');
          expect(text).toMatch(/Ctrl-C stops it\.\n$/m);
          return text.split('\n');
        },
        { timeout: 30_000, interval: 50 },
      );
      const address = new URL(lines[0]!);
      expect(lines[0]).toMatch(/^http:\/\/127\.0\.0\.2:\d+\/\?token=[\w-]{43}$/);
      expect(lines.slice(1)).toEqual([
        'ckpt studio on a sqlite store, read-only (start with --write to allow changes); open the address above. Ctrl-C stops it.',
        // 127.0.0.2 is a loopback address: only this machine reaches it, and no warning is due.
        '',
      ]);
      const port = Number(address.port);
      expect(listeningAddress(port)).toBe('127.0.0.2');
      const studio = { origin: address.origin, port, token: address.searchParams.get('token')! };
      expect((await client(studio).get('/api/studio')).status).toBe(200);
    } finally {
      child.kill('SIGINT');
      await exited;
    }
  });

  it('stops on Ctrl-C and exits 0', async () => {
    const studio = await startStudio(url);
    expect(await studio.stop()).toBe(0);
  });
});

describe("the README's codes", () => {
  it('gives every code the HTTP status the studio answers it with', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8').replace(
      /\s+/g,
      ' ',
    );
    const [, table, own, refused] =
      /the HTTP status that fits it: ([^;]+); (401 [^;]+); (403 [^.]+)\./.exec(readme)!;
    const listed: Record<string, number> = {};
    for (const entry of table!.split(', ')) {
      for (const [, code] of entry.matchAll(/`(\w+)`/g)) listed[code!] = Number(entry.slice(0, 3));
    }
    expect(listed).toEqual(STATUS);
    // The one code of the studio's own, which the token test sees it answer.
    expect(own).toMatch(/^401 `UNAUTHORIZED` without the token/);
    expect(refused).toMatch(/^403 `FORBIDDEN` for /);
  });
});

describe('ckpt studio on an encrypted store', () => {
  it('says that a value is encrypted under a key it was not started with, and how to start it with the key', async () => {
    const url = `sqlite:${join(dir, 'sealed.db')}`;
    const keyFile = (name: string, key: Buffer) => {
      const file = join(dir, `${name}.keys`);
      writeFileSync(file, `${name}=${key.toString('base64')}\n`, { mode: 0o600 });
      return file;
    };
    const k1 = randomBytes(32);
    const store = await openStore(url, { codecs: [encrypt({ keys: { k1 }, current: 'k1' })] });
    await store.checkpoint('sealed', { secret: 1 }, { transcript: ['hi'] });
    await store.state('prefs').set('k', 'v');
    await store.close();
    const cases: [string[], string][] = [
      [[], '(key "k1"), and no keys were given'],
      [
        ['--key-file', keyFile('k2', randomBytes(32))],
        'with key "k1", not among the keys given (k2)',
      ],
    ];
    for (const [args, given] of cases) {
      const studio = await startStudio(url, args);
      try {
        const c = client(studio);
        for (const [path, place] of [
          [at('sealed'), 'checkpoint 1 of session "sealed"'],
          [at('sealed', '/diff?to=1'), 'checkpoint 1 of session "sealed"'],
          [at('sealed', '/transcript'), 'checkpoint 1 of session "sealed"'],
          ['/api/state/prefs/entries', 'state key "k" of scope "prefs"'],
        ] as const) {
          const { status, json } = await c.get(path);
          expect({ status, json }, `${path} ${given}`).toEqual({
            status: 500,
            json: {
              error: {
                code: 'UNREADABLE',
                message: `a stored value of ${place} is encrypted ${given}; start ckpt studio again with its key, in CKPT_KEYS or in a file named by --key-file.`,
              },
            },
          });
        }
      } finally {
        await studio.stop();
      }
    }
    const studio = await startStudio(url, ['--key-file', keyFile('k1', k1)]);
    try {
      expect((await client(studio).get(at('sealed'))).json).toMatchObject({
        checkpoint: { data: { secret: 1 } },
        transcript: ['hi'],
      });
    } finally {
      await studio.stop();
    }
  });
});

describe('ckpt studio and the store URL', () => {
  it('takes the URL, its password and a file path out of every message', () => {
    const redact = redactor(
      'postgres://app:s3cr%40t@db.internal:5432/agents?namespace=x&sslmode=require',
    );
    const text = redact(
      'failed on postgres://app:s3cr%40t@db.internal:5432/agents?namespace=x&sslmode=require, postgres://app:***@db.internal:5432/agents and s3cr@t',
    );
    expect(text).not.toMatch(/s3cr|db\.internal/);
    expect(redactor('sqlite:/srv/agents/agent.db')('cannot open /srv/agents/agent.db')).toBe(
      'cannot open <store>',
    );
  });

  const postgres = URL_STORES.find((s) => s.name === 'postgres');
  it.runIf(postgres !== undefined)(
    'never sends the URL of a server store, nor its password, in any answer',
    async () => {
      const base = new URL(serviceUrl('postgres'));
      base.password = 'studio-s3cret';
      base.searchParams.set('namespace', 'cli_studio_secret');
      const secretUrl = base.toString();
      const store = await openStore(secretUrl);
      await emptyStore(store, []);
      await store.checkpoint('s', { a: 1 }, { transcript: ['hi'] });
      await store.checkpoint('s', { a: 2 });
      await store.state('scope').set('k', 1);
      const studio = await startStudio(secretUrl, ['--write']);
      try {
        const c = client(studio);
        const answers = [
          await send(studio.origin, 'GET', `/?token=${studio.token}`),
          await c.get('/'),
          await c.get('/sessions/s'),
          await c.get('/api/studio'),
          await c.get('/api/sessions'),
          await c.get(at('s')),
          await c.get(at('s', '/tree')),
          await c.get(at('s', '/history')),
          await c.get(at('s', '/transcript')),
          await c.get(at('s', '/diff?to=2')),
          await c.get('/api/state'),
          await c.get('/api/state/scope/entries'),
          await c.get(at('nobody', '/tree')),
          await c.get('/api/nothing'),
          await c.get('/api/sessions?cursor=x'),
          await c.change('POST', at('s', '/rollback'), { seq: 9 }),
          await c.change('POST', at('s', '/fork'), { newId: 's' }),
          await send(studio.origin, 'GET', '/api/sessions'),
        ];
        const page = answers[1]!.text;
        for (const src of page.match(/\/assets\/[^"]+/g)!) answers.push(await c.get(src));
        for (const answer of answers) {
          const all = JSON.stringify(answer.headers) + answer.text;
          expect(all).not.toContain('studio-s3cret');
          expect(all).not.toContain(base.host);
          expect(all).not.toMatch(/postgres(ql)?:\/\//);
        }
        expect(studio.stderr()).not.toContain('studio-s3cret');
      } finally {
        await studio.stop();
        await emptyStore(store, ['scope']);
        await store.close();
      }
    },
  );
});
