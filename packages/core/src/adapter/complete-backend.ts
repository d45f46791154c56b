/**
 * What core builds of a backend that leaves methods out: the checkpoint listing, the lineage
 * walk and fork, from the methods every backend has (load, exportCheckpoints, importSession);
 * and the capabilities that its methods show. A backend that has a method keeps its own, which
 * is faster: one query where a default takes a call a checkpoint.
 */
import { type CkptError, unsupported } from '../values/errors.js';
import type {
  BackendCapabilities,
  CheckpointBackend,
  CompleteBackend,
  DerivedMethod,
  ExportedStoredCheckpoint,
  ForkInput,
  ForkResult,
  ListingMethod,
  StoredCheckpointInfo,
  StoredLineageEntry,
} from './backend.js';
import { closeOverNeeds } from './needs.js';

/** The checkpoints an export page reads at a time. */
const PAGE = 100;

/** What the store's capabilities are on `backend`: its listings from its methods. */
export function capabilitiesOf(backend: CheckpointBackend): BackendCapabilities {
  const has = (method: ListingMethod) => typeof backend[method] === 'function';
  return {
    concurrentWriters: backend.capabilities?.concurrentWriters === true,
    listSessions: has('sessions'),
    listStateKeys: has('stateKeys') && has('stateScopes'),
    watch: typeof backend.changes === 'function',
    tags: typeof backend.setTags === 'function',
  };
}

/**
 * `backend` with every method: its own, and for each it left out, core's (see the file's
 * comment); a listing it lacks refuses with UNSUPPORTED, as its capabilities say. The backend
 * itself where it has them all; else a view of it that calls its own methods on it.
 */
export function completeBackend(backend: CheckpointBackend): CompleteBackend {
  const capabilities = capabilitiesOf(backend);
  const derived: Partial<Record<DerivedMethod | ListingMethod, unknown>> = {};
  if (!backend.listCheckpoints) derived.listCheckpoints = listCheckpointsOf(backend);
  if (!backend.lineage) derived.lineage = lineageOf(backend);
  if (!backend.fork) derived.fork = forkOf(backend);
  for (const method of ['sessions', 'stateKeys', 'stateScopes', 'setTags'] as const) {
    if (!backend[method]) derived[method] = () => Promise.reject(cannotList(backend, method));
  }
  // A backend that has every method and says what they show is called as it is: no view in
  // between on every call.
  const declared = (backend.capabilities ?? {}) as Partial<BackendCapabilities>;
  const saysAll = (Object.keys(capabilities) as (keyof BackendCapabilities)[]).every(
    (name) => declared[name] === capabilities[name],
  );
  if (Object.keys(derived).length === 0 && saysAll) return backend as CompleteBackend;
  return new Proxy(backend, {
    get(target, key) {
      if (key === 'capabilities') return capabilities;
      if (key in derived) return derived[key as DerivedMethod];
      const value: unknown = Reflect.get(target, key, target);
      // Its own methods run on it, so that private fields of a class are there.
      return typeof value === 'function' ? value.bind(target) : value;
    },
    has: (target, key) => key in derived || key in target,
  }) as unknown as CompleteBackend;
}

/** UNSUPPORTED, for a listing the backend does not have. */
function cannotList(backend: CheckpointBackend, method: ListingMethod): CkptError {
  const capability =
    method === 'sessions' ? 'listSessions' : method === 'setTags' ? 'tags' : 'listStateKeys';
  return unsupported(backend.name, `${method}()`, capability);
}

/** Every stored checkpoint of a session, seq ascending, an export page at a time. */
async function* everyCheckpoint(
  backend: CheckpointBackend,
  sessionId: string,
): AsyncGenerator<ExportedStoredCheckpoint> {
  for (let afterSeq: number | null = null; ; ) {
    const page = await backend.exportCheckpoints(sessionId, { afterSeq, limit: PAGE });
    yield* page;
    if (page.length < PAGE) return;
    afterSeq = page[page.length - 1]!.seq;
  }
}

/** listCheckpoints from exportCheckpoints: the session read up to `beforeSeq`. */
function listCheckpointsOf(backend: CheckpointBackend): CompleteBackend['listCheckpoints'] {
  return async (sessionId, { beforeSeq, limit }) => {
    const below: StoredCheckpointInfo[] = [];
    for await (const cp of everyCheckpoint(backend, sessionId)) {
      if (beforeSeq !== null && cp.seq >= beforeSeq) break;
      const { data: _data, transcript: _transcript, needs: _needs, ...info } = cp;
      below.push(info);
    }
    return limit > 0 ? below.slice(-limit).reverse() : [];
  };
}

/** lineage from load, following parents; each transcript read from exportCheckpoints. */
function lineageOf(backend: CheckpointBackend): CompleteBackend['lineage'] {
  const transcriptOf = async (sessionId: string, seq: number) => {
    const [cp] = await backend.exportCheckpoints(sessionId, { afterSeq: seq - 1, limit: 1 });
    return cp?.seq === seq ? cp.transcript : undefined;
  };
  return async (sessionId, { fromSeq, limit, transcript }) => {
    const walk: StoredLineageEntry[] = [];
    let cp = limit > 0 ? await backend.load(sessionId, fromSeq) : null;
    while (cp !== null) {
      const entry: StoredLineageEntry = { seq: cp.seq, parent: cp.parent, createdAt: cp.createdAt };
      if (transcript) {
        const items = await transcriptOf(sessionId, cp.seq);
        // Removed since it was loaded: the walk ends where a checkpoint is not stored.
        if (items === undefined) break;
        entry.transcript = items;
      }
      walk.push(entry);
      if (walk.length >= limit || cp.parent === null) break;
      cp = await backend.load(sessionId, cp.parent);
    }
    return walk;
  };
}

/**
 * fork as an import: the session read whole, then `atSeq`, its stored ancestors and what they
 * need written under `newId` in one importSession, which refuses a taken id.
 */
function forkOf(backend: CheckpointBackend): (input: ForkInput) => Promise<ForkResult> {
  return async ({ sessionId, atSeq, newId, now }) => {
    const session = await backend.session(sessionId);
    if (session === null) return { status: 'not_found', missing: 'session' };
    const stored = new Map<number, ExportedStoredCheckpoint>();
    for await (const cp of everyCheckpoint(backend, sessionId)) stored.set(cp.seq, cp);
    if (stored.size === 0) return { status: 'not_found', missing: 'session' };
    const at = atSeq ?? session.head;
    if (!stored.has(at)) return { status: 'not_found', missing: 'seq' };
    const chain: number[] = [];
    for (let cp = stored.get(at); cp; cp = cp.parent === null ? undefined : stored.get(cp.parent)) {
      chain.push(cp.seq);
    }
    const copied = closeOverNeeds(chain, (seq) => stored.get(seq)?.needs ?? []);
    const checkpoints = [...copied]
      .sort((a, b) => a - b)
      .flatMap((seq) => {
        const cp = stored.get(seq);
        // A fork copies no pins: what its source keeps, the fork may let go.
        return cp ? [{ ...cp, pinned: false, pinNote: null }] : [];
      });
    const imported = await backend.importSession({
      sessionId: newId,
      head: at,
      forkedFrom: { sessionId, seq: at },
      createdAt: now,
      updatedAt: now,
      checkpoints,
      replace: false,
      ...(session.tags ? { tags: session.tags } : {}),
    });
    return imported === 'exists' ? { status: 'exists' } : { status: 'done', seq: at };
  };
}
