/**
 * The event loop's side of the writer thread: it posts batches of write calls and hands back
 * their outcomes, errors built again as the classes they were. The thread starts with the
 * first batch. One that stops (it crashed, or was terminated) fails the calls it held with
 * BACKEND, since each may or may not have committed, and the next batch starts another.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { CkptError } from '@ckpt/core';
import { receiveError } from './thread-errors.js';
import type { Outcome, WriteCall } from './write-call.js';
import type { FromWriter, ToWriter, WriterFile } from './writer-messages.js';
import { writerScript } from './writer-script.js';

interface Held {
  resolve: (outcomes: Outcome[]) => void;
  reject: (err: unknown) => void;
}

/** A thread that owns a file's write connection and commits what it is posted. */
export class WriterThread {
  readonly #file: WriterFile;
  #thread: Worker | null = null;
  /** The batches posted and not yet answered, by id. */
  readonly #held = new Map<number, Held>();
  #nextId = 0;
  #closing: Promise<void> | undefined;
  #drained: (() => void) | undefined;

  constructor(file: WriterFile) {
    this.#file = { ...file };
  }

  /** The running thread, for inspection; null before the first write and after it stops. */
  get thread(): Worker | null {
    return this.#thread;
  }

  /** Whether the thread holds no batch (and is not closing): a write now would wait for nothing. */
  get idle(): boolean {
    return this.#held.size === 0 && this.#closing === undefined;
  }

  /** Make the thread's connection overwrite what it deletes from now on (see `overwriteDeleted`). */
  secureDelete(): void {
    if (this.#file.secureDelete) return;
    this.#file.secureDelete = true;
    // A thread started later opens its connection so; one running now is told, before any
    // batch posted after this.
    this.#thread?.postMessage({ secureDelete: true } satisfies ToWriter);
  }

  /** Commit `calls` as one batch on the thread; each call's outcome, in order. */
  readonly commit = (calls: WriteCall[]): Promise<Outcome[]> => {
    if (this.#closing) {
      return Promise.reject(
        new CkptError('CLOSED', 'The SQLite backend is closed; open a new store to write.'),
      );
    }
    const thread = this.#thread ?? this.#start();
    const id = this.#nextId++;
    return new Promise<Outcome[]>((resolve, reject) => {
      this.#held.set(id, { resolve, reject });
      // The thread keeps the process alive only while it holds calls, as a pending query does.
      if (this.#held.size === 1) thread.ref();
      try {
        thread.postMessage({ id, calls } satisfies ToWriter);
      } catch (err) {
        this.#answered(id);
        reject(err);
      }
    });
  };

  /** Wait for the batches held, then close the connection and end the thread. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#held.size > 0) {
        await new Promise<void>((resolve) => {
          this.#drained = resolve;
        });
      }
      const thread = this.#thread;
      if (thread === null) return;
      this.#thread = null;
      thread.ref();
      const exited = once(thread, 'exit');
      thread.postMessage({ close: true } satisfies ToWriter);
      await exited;
    })();
    return this.#closing;
  }

  #start(): Worker {
    const thread = new Worker(writerScript, { workerData: this.#file });
    thread.unref();
    thread.on('message', (reply: FromWriter) => {
      const held = this.#held.get(reply.id);
      this.#answered(reply.id);
      held?.resolve(
        reply.outcomes.map((outcome) =>
          'error' in outcome ? { error: receiveError(outcome.error) } : outcome,
        ),
      );
    });
    thread.on('error', (err) => this.#stopped(thread, err));
    thread.on('exit', (code) => this.#stopped(thread, `it exited with code ${code}`));
    this.#thread = thread;
    return thread;
  }

  #answered(id: number): void {
    this.#held.delete(id);
    if (this.#held.size > 0) return;
    this.#thread?.unref();
    this.#drained?.();
  }

  /** The thread ended without being asked: what it held fails, and the next write starts another. */
  #stopped(thread: Worker, reason: unknown): void {
    if (this.#thread !== thread) return;
    this.#thread = null;
    const why = reason instanceof Error ? reason.message : String(reason);
    const held = [...this.#held.values()];
    this.#held.clear();
    for (const { reject } of held) {
      reject(
        new CkptError(
          'BACKEND',
          `sqlite backend failed: the writer thread stopped (${why}) while it held this call, which may or may not have been stored; retry it (a checkpoint with the same idempotencyKey).`,
          { cause: reason instanceof Error ? reason : undefined },
        ),
      );
    }
    this.#drained?.();
  }
}
