/**
 * `reencode()`: every stored value rewritten under the store's current codecs, beside live
 * writers, so that a key no value needs any more can be dropped. Sessions are read a page at a
 * time and their checkpoints a page at a time; each value is replaced only while it is still
 * what was read (`rewriteCheckpoint`, `stateCompareAndSet`), so a write, prune or delete that
 * lands meanwhile wins. Seqs, ids, times and metadata stay as they are.
 */
import type { CompleteBackend, SessionPosition } from '../adapter/backend.js';
import { type CodecChain, madeBy } from '../codecs/chain.js';
import { CkptError, invalidArgument, unsupported } from '../values/errors.js';
import { checkOptions, checkSignal } from '../values/validate.js';
import { progressReports } from './progress.js';
import { SessionValues, sealCheckpointValue } from './session-values.js';
import type { Runner } from './state.js';

/** Sessions, checkpoints, scopes or keys read by one backend call. */
const PAGE = 64;
// A state value a writer keeps changing under the rewrite is left to that writer after this
// many tries: its writes are under the current codecs, or another pass takes it.
const STATE_TRIES = 10;
// Each pass after the first only meets what writers with other codecs wrote meanwhile.
const MAX_PASSES = 10;

/**
 * How far `reencode()` has got. The store's sessions are walked in passes, so `sessions` counts
 * those of the pass under way, and never runs past the store's own count (but for sessions
 * created meanwhile); the values rewritten are counted across the whole call.
 */
export interface ReencodeProgress {
  /**
   * The walk over the sessions: 1, then 2, 3 … while the one before rewrote something, since a
   * session written to during a pass can move behind it. State values are rewritten after the
   * last pass, under its number.
   */
  pass: number;
  /** Sessions walked in this pass. */
  sessions: number;
  /** Checkpoints rewritten so far, in every pass. */
  checkpoints: number;
  /** State values rewritten so far. */
  state: number;
}

/** What `reencode()` rewrote: checkpoints (data and transcript items together) and state values. */
export interface ReencodeResult {
  checkpoints: number;
  state: number;
}

/** Options of `reencode()`. */
export interface ReencodeOptions {
  /** Stops the rewrite once aborted; it rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Called after each page of sessions or state keys, and once more when the call fails or is
   * stopped, so that the last progress it got counts every value rewritten.
   */
  onProgress?(progress: ReencodeProgress): void;
}

/** Rewrite every value of `backend` that the codecs would not write as it is stored. */
export async function reencode(
  backend: CompleteBackend,
  codecs: CodecChain,
  run: Runner,
  options: ReencodeOptions | undefined,
): Promise<ReencodeResult> {
  const opts = checkOptions(options, 'options', ['signal', 'onProgress'], 'reencode()');
  const signal = checkSignal(opts.signal, 'signal');
  if (opts.onProgress !== undefined && typeof opts.onProgress !== 'function') {
    throw invalidArgument('onProgress', 'onProgress must be a function.');
  }
  const rewrite = backend.rewriteCheckpoint?.bind(backend);
  if (rewrite === undefined) {
    throw new CkptError(
      'UNSUPPORTED',
      `reencode() is not supported by the ${backend.name} backend, which has no rewriteCheckpoint(); nothing was rewritten.`,
      { details: { capability: 'rewriteCheckpoint' } },
    );
  }
  if (!backend.capabilities.listSessions)
    throw unsupported(backend.name, 'reencode()', 'listSessions');
  if (!backend.capabilities.listStateKeys)
    throw unsupported(backend.name, 'reencode()', 'listStateKeys');

  const progress: ReencodeProgress = { pass: 1, sessions: 0, checkpoints: 0, state: 0 };
  const { report, reportingStop } = progressReports(progress, opts.onProgress?.bind(opts));

  const reencodeSession = async (sessionId: string) => {
    const values = new SessionValues(backend, codecs, sessionId);
    let afterSeq: number | null = null;
    for (;;) {
      const page = await run(() => backend.exportCheckpoints(sessionId, { afterSeq, limit: PAGE }));
      for (const cp of page) {
        signal?.throwIfAborted();
        const from = { data: cp.data, transcript: cp.transcript };
        const to = {
          data: sealCheckpointValue(
            codecs,
            sessionId,
            'data',
            await values.open(cp.data, 'data', cp.seq),
          ),
          transcript: sealCheckpointValue(
            codecs,
            sessionId,
            'transcript',
            await values.open(cp.transcript, 'transcript', cp.seq),
          ),
        };
        if (
          madeBy(to.data) === madeBy(from.data) &&
          madeBy(to.transcript) === madeBy(from.transcript)
        ) {
          continue;
        }
        // False: pruned, deleted or replaced meanwhile, by a writer whose values are its own.
        if (await run(() => rewrite({ sessionId, seq: cp.seq, from, to }))) progress.checkpoints++;
      }
      if (page.length < PAGE) return;
      afterSeq = page.at(-1)!.seq;
    }
  };

  // Sessions are listed most recently updated first, so one written to during a pass can move
  // ahead of where the pass is and be missed by it: passes repeat until one rewrites nothing.
  const reencodeSessions = async () => {
    for (let pass = 1; ; pass++) {
      if (pass > MAX_PASSES) {
        throw new CkptError(
          'CONFLICT',
          `reencode(): after ${MAX_PASSES} passes, checkpoints are still being written under other codecs; give every writer the same codecs, then run it again.`,
        );
      }
      progress.pass = pass;
      progress.sessions = 0;
      const rewrittenBefore = progress.checkpoints;
      let after: SessionPosition | null = null;
      for (;;) {
        signal?.throwIfAborted();
        const sessions = await run(() => backend.sessions({ after, limit: PAGE, prefix: '' }));
        for (const session of sessions) {
          await reencodeSession(session.sessionId);
          progress.sessions++;
        }
        report();
        const last = sessions.at(-1);
        if (sessions.length < PAGE || last === undefined) break;
        after = { updatedAt: last.updatedAt, sessionId: last.sessionId };
      }
      if (progress.checkpoints === rewrittenBefore) return;
    }
  };

  const reencodeState = async (scope: string, key: string) => {
    for (let attempt = 0; attempt < STATE_TRIES; attempt++) {
      const stored = await run(() => backend.stateGet(scope, key));
      if (stored === undefined) return;
      const next = codecs.encode(codecs.decode(stored, { scope, key }).text, { scope, key });
      if (madeBy(next) === madeBy(stored)) return;
      if (await run(() => backend.stateCompareAndSet(scope, key, stored, next))) {
        progress.state++;
        return;
      }
    }
  };

  const reencodeStates = async () => {
    let afterScope: string | null = null;
    for (;;) {
      const scopes = await run(() => backend.stateScopes({ after: afterScope, limit: PAGE }));
      for (const scope of scopes) {
        let afterKey: string | null = null;
        for (;;) {
          signal?.throwIfAborted();
          const keys = await run(() =>
            backend.stateKeys(scope, { prefix: '', after: afterKey, limit: PAGE }),
          );
          for (const key of keys) await reencodeState(scope, key);
          report();
          if (keys.length < PAGE) break;
          afterKey = keys.at(-1)!;
        }
      }
      if (scopes.length < PAGE) return;
      afterScope = scopes.at(-1)!;
    }
  };

  // What was rewritten since the last page's report, the rewrite that was under way when the
  // signal came among it too, stays rewritten: the last progress counts it.
  await reportingStop(async () => {
    await reencodeSessions();
    await reencodeStates();
  });
  return { checkpoints: progress.checkpoints, state: progress.state };
}
