/**
 * Namespaces that a server adapter's contract run uses again. Each case wants empty storage of
 * its own, which on a server means a namespace of its own. A new one costs the DDL of every
 * migration before the case and a drop after it, tens of milliseconds each time and most of a
 * run's time; emptying the tables of one that a case is done with costs one or two. An
 * emptied namespace holds what a new one holds, so no case sees what another wrote.
 */
import type { CheckpointBackend, KvStore } from '@ckpt/core';
import type { ContractHarness } from './harness.js';
import type { KvStoreHarness } from './kv-store-cases.js';

/** How the pool makes, empties and drops a namespace on the server. */
export interface NamespaceStorage {
  /** A new namespace name that nothing else uses. */
  fresh(): string;
  /** Remove every row the namespace holds, keeping its tables and its schema version. */
  empty(namespace: string): Promise<void>;
  /** Remove the namespace from the server. */
  drop(namespace: string): Promise<void>;
}

/** Namespaces handed to cases one at a time, emptied and kept between them. */
export interface NamespacePool {
  /** A namespace no running case uses: one that `release` emptied, or a new one. */
  take(): string;
  /**
   * Empty `namespace` and keep it for the next case, when it came from `take`; drop it when it
   * did not (a case's own, such as the namespace isolation case's). Releasing a kept namespace
   * again does nothing, so every connection of a case may release it.
   */
  release(namespace: string): Promise<void>;
  /** Drop every namespace the pool made; call it once, after the last case. */
  dropAll(): Promise<void>;
  /**
   * A harness's `create`, `connect`, `namespaced` and `destroy` for backends that `open` opens
   * in a namespace: `create` opens one in a namespace from `take`, `connect` and `namespaced`
   * open more, and `destroy` closes each and releases its namespace.
   */
  harness(open: (namespace: string) => CheckpointBackend | Promise<CheckpointBackend>): PoolHarness;
  /**
   * `runKvStoreTests`'s `create` and `destroy` for key-value stores that `open` opens in a
   * namespace, as `harness` gives them for backends.
   */
  kvHarness(
    open: (namespace: string) => KvStore | Promise<KvStore>,
  ): Required<Pick<KvStoreHarness, 'create' | 'destroy'>>;
}

/** The parts of a `ContractHarness` that a `NamespacePool` provides. */
export type PoolHarness = Required<
  Pick<ContractHarness, 'create' | 'connect' | 'namespaced' | 'destroy'>
>;

/** A pool of namespaces on the storage `storage` describes. */
export function namespacePool(storage: NamespaceStorage): NamespacePool {
  const made = new Set<string>();
  const spare: string[] = [];
  const pool: NamespacePool = {
    take() {
      const namespace = spare.pop() ?? storage.fresh();
      made.add(namespace);
      return namespace;
    },
    async release(namespace) {
      if (!made.has(namespace)) return storage.drop(namespace);
      if (spare.includes(namespace)) return;
      await storage.empty(namespace);
      spare.push(namespace);
    },
    async dropAll() {
      for (const namespace of made) await storage.drop(namespace);
      made.clear();
      spare.length = 0;
    },
    harness(open) {
      const namespaceOf = new WeakMap<CheckpointBackend, string>();
      const opened = async (namespace: string) => {
        const backend = await open(namespace);
        namespaceOf.set(backend, namespace);
        return backend;
      };
      return {
        create: () => opened(pool.take()),
        connect: (backend) => opened(namespaceOf.get(backend)!),
        namespaced: (_backend, namespace) => opened(namespace),
        destroy: async (backend) => {
          await backend.close();
          await pool.release(namespaceOf.get(backend)!);
        },
      };
    },
    kvHarness(open) {
      const namespaceOf = new WeakMap<KvStore, string>();
      return {
        create: async () => {
          const namespace = pool.take();
          const kv = await open(namespace);
          namespaceOf.set(kv, namespace);
          return kv;
        },
        destroy: async (kv) => {
          await kv.close?.();
          await pool.release(namespaceOf.get(kv)!);
        },
      };
    },
  };
  return pool;
}
