/** What a backend author gives `runContractTests`, and the per-test context the cases use. */
import {
  type BackendCapabilities,
  type CheckpointBackend,
  CheckpointStore,
  type StoreOptions,
} from '@ckpt/core';
import { afterEach, beforeEach } from 'vitest';

/** How the contract suite opens, connects to and cleans up a backend. */
export interface ContractHarness {
  /** Shown in test titles, e.g. `postgres` or `kv(my-store)`. */
  name: string;
  /**
   * What a store on the backend can do (capabilitiesOf: the listings its methods show,
   * concurrentWriters as it declares); cases gated on one it lacks are skipped, saying why.
   */
  capabilities: BackendCapabilities;
  /** Open a fresh, isolated backend: storage that no other test sees (a new file, namespace or instance). */
  create(): CheckpointBackend | Promise<CheckpointBackend>;
  /**
   * Open another connection to the same storage as `backend`, as a second process would.
   * Concurrency cases spread their callers over such connections. Default: share `backend`.
   */
  connect?(backend: CheckpointBackend): CheckpointBackend | Promise<CheckpointBackend>;
  /**
   * Open a backend on the same storage as `backend` but in another `namespace`.
   * Without it, the namespace isolation case is skipped.
   */
  namespaced?(
    backend: CheckpointBackend,
    namespace: string,
  ): CheckpointBackend | Promise<CheckpointBackend>;
  /** Release a backend opened by `create`, `connect` or `namespaced`. Default: `backend.close()`. */
  destroy?(backend: CheckpointBackend): void | Promise<void>;
  /** Random operation sequences in the model-based case. Default 200. */
  modelRuns?: number;
  /** Connections (and parallel callers) in the concurrency cases. Default 4. */
  connections?: number;
  /** Timeout of each case in milliseconds. Default 60 000. */
  timeout?: number;
}

/** What each case works with: a fresh store, and ways to open more on the same storage. */
export interface ContractContext {
  /** A store on a fresh, isolated backend. */
  readonly store: CheckpointStore;
  /** The backend under `store`. */
  readonly backend: CheckpointBackend;
  /** A store on the same backend instance, with other options (such as `maxPayloadBytes`). */
  storeWith(options: StoreOptions): CheckpointStore;
  /** A store on a new connection to the same storage. */
  connect(): Promise<CheckpointStore>;
  /** A store on the same storage in another namespace (only when the harness has `namespaced`). */
  namespaced(namespace: string): Promise<CheckpointStore>;
}

/** Register per-test setup and teardown, and return the context the cases read. */
export function useContext(harness: ContractHarness): ContractContext {
  let opened: CheckpointBackend[] = [];
  let backend: CheckpointBackend | undefined;
  let store: CheckpointStore | undefined;

  const track = (b: CheckpointBackend) => {
    if (!opened.includes(b)) opened.push(b);
    return b;
  };

  beforeEach(async () => {
    backend = track(await harness.create());
    store = new CheckpointStore(backend);
  });

  afterEach(async () => {
    const toClose = opened.reverse();
    opened = [];
    for (const b of toClose) await (harness.destroy ? harness.destroy(b) : b.close());
  });

  return {
    get store() {
      if (!store) throw new Error('the contract context is only available inside a test');
      return store;
    },
    get backend() {
      if (!backend) throw new Error('the contract context is only available inside a test');
      return backend;
    },
    storeWith(options) {
      return new CheckpointStore(this.backend, options);
    },
    async connect() {
      const other = harness.connect ? await harness.connect(this.backend) : this.backend;
      return new CheckpointStore(track(other));
    },
    async namespaced(namespace) {
      if (!harness.namespaced) throw new Error('the harness has no namespaced()');
      return new CheckpointStore(track(await harness.namespaced(this.backend, namespace)));
    },
  };
}
