/** The page's calls to the studio's API. Every change carries the header the server asks for. */
import type {
  Change,
  CheckpointDetail,
  Json,
  Page,
  SessionInfo,
  SessionTopology,
  Shown,
  StateEntry,
  StudioInfo,
  TranscriptEntry,
} from './wire.js';

/** A refusal from the API, with its `CkptError` code. */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') {
    headers['x-ckpt-studio'] = '1';
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  const value = (await res.json().catch(() => null)) as unknown;
  if (!res.ok) {
    const error = (value as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(res.status, error?.code ?? 'BACKEND', error?.message ?? res.statusText);
  }
  return value as T;
}

const get = <T>(path: string) => call<T>('GET', path);
const enc = encodeURIComponent;

/** `?a=1&b=x` (`&b=y` again for each value of a list), leaving out what is null, undefined or ''. */
function query(params: Record<string, string | number | null | undefined | string[]>): string {
  const q = new URLSearchParams();
  for (const [name, given] of Object.entries(params)) {
    for (const value of Array.isArray(given) ? given : [given]) {
      if (value !== null && value !== undefined && value !== '') q.append(name, String(value));
    }
  }
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

/** Every call the page makes. */
export const api = {
  studio: () => get<StudioInfo>('/api/studio'),
  /** A page of the sessions whose id starts with `prefix` and that have every tag of `where` (`key=value` each). */
  sessions: (prefix: string, where: string[], cursor: string | null, limit = 50) =>
    get<Page<SessionInfo>>(`/api/sessions${query({ prefix, where, cursor, limit })}`),
  topology: (id: string) => get<SessionTopology>(`/api/sessions/${enc(id)}/topology`),
  details: (id: string, seqs: number[]) =>
    get<CheckpointDetail[]>(
      `/api/sessions/${enc(id)}/checkpoints${query({ seqs: seqs.join(',') })}`,
    ),
  show: (id: string, seq: number) => get<Shown>(`/api/sessions/${enc(id)}${query({ seq })}`),
  diff: (id: string, to: number, from: number | null) =>
    get<Change[]>(`/api/sessions/${enc(id)}/diff${query({ to, from })}`),
  transcript: (id: string, cursor: string | null, limit = 50) =>
    get<Page<TranscriptEntry>>(`/api/sessions/${enc(id)}/transcript${query({ cursor, limit })}`),
  scopes: (cursor: string | null) => get<Page<string>>(`/api/state${query({ cursor })}`),
  entries: (scope: string, cursor: string | null) =>
    get<Page<StateEntry>>(`/api/state/${enc(scope)}/entries${query({ cursor })}`),
  rollback: (id: string, seq: number, expectedHead: number) =>
    call<{ head: number }>('POST', `/api/sessions/${enc(id)}/rollback`, { seq, expectedHead }),
  fork: (id: string, atSeq: number, newId: string) =>
    call<{ sessionId: string }>('POST', `/api/sessions/${enc(id)}/fork`, { atSeq, newId }),
  prune: (id: string, keepLast: number) =>
    call<{ removed: number }>('POST', `/api/sessions/${enc(id)}/prune`, { keepLast }),
  deleteSession: (id: string) => call<{ deleted: boolean }>('DELETE', `/api/sessions/${enc(id)}`),
  setState: (scope: string, key: string, value: Json) =>
    call<{ set: true }>('POST', `/api/state/${enc(scope)}/keys/${enc(key)}`, { value }),
  deleteState: (scope: string, key: string) =>
    call<{ deleted: boolean }>('DELETE', `/api/state/${enc(scope)}/keys/${enc(key)}`),
};
