/**
 * Retention: which checkpoints a prune lets go (`keepLast`, `olderThan`), the `retention` store
 * option that prunes sessions as they are written, and `sweep()`, which walks the whole store a
 * page at a time, deleting idle sessions and pruning the others. Every decision that removes
 * something is made by the backend in the same atomic step as the removal, so a writer that
 * lands meanwhile wins.
 */
import type { CompleteBackend, PruneRule, SessionPosition } from '../adapter/backend.js';
import { invalidArgument, unsupported } from '../values/errors.js';
import { checkOptions, checkPositiveInteger, checkSignal, describe } from '../values/validate.js';
import { progressReports } from './progress.js';
import type { Runner } from './state.js';

/** Which checkpoints `prune` removes: at least one of the two. */
export interface PruneOptions {
  /** Keep the `keepLast` newest checkpoints (an integer from 1). */
  keepLast?: number;
  /** Keep the checkpoints created less than `olderThan` milliseconds ago (an integer from 0). */
  olderThan?: number;
}

/**
 * The `retention` store option: each session this store writes is pruned by these rules as it
 * grows (see "Keeping storage bounded" in core's README).
 */
export type RetentionPolicy = PruneOptions;

/** Options of `sweep()`: at least one of `idleFor`, `keepLast` and `olderThan`. */
export interface SweepOptions extends PruneOptions {
  /**
   * Delete the sessions with no checkpoint, rollback or import of their own for longer than
   * this many milliseconds (an integer from 0) and no pinned checkpoint.
   */
  idleFor?: number;
  /** Count what would be removed, removing nothing. */
  dryRun?: boolean;
  /** Stops the sweep once aborted; it rejects with the signal's reason. Running it again goes on. */
  signal?: AbortSignal;
  onProgress?(progress: SweepProgress): void;
}

/** What `sweep()` removed (with `dryRun`: would remove). */
export interface SweepResult {
  /** Sessions deleted for being idle. */
  sessions: number;
  /** Checkpoints removed: those of the deleted sessions and those pruned from the others. */
  checkpoints: number;
}

/** How far `sweep()` has got: sessions looked at, and what it removed so far. */
export interface SweepProgress extends SweepResult {
  walked: number;
}

/** Sessions read, or deleted by one native batch, per backend call of a sweep. */
export const SWEEP_PAGE = 100;

/**
 * The `retention` option prunes a session after each checkpoint whose seq is a multiple of
 * this: one prune per so many appends keeps its cost off most writes, and a session holds at
 * most this many checkpoints beyond what the policy keeps.
 */
export const RETENTION_INTERVAL = 10;

/** A duration in milliseconds: a safe integer from 0. */
function checkDuration(value: unknown, argument: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalidArgument(
      argument,
      `${argument} must be a whole number of milliseconds from 0 to ${Number.MAX_SAFE_INTEGER}, got ${describe(value)}.`,
    );
  }
  return value;
}

/** `keepLast` and `olderThan` as given (either may be absent), checked. */
function checkRuleParts(
  given: PruneOptions,
  argument: (name: string) => string,
): { keepLast: number | null; olderThan: number | null } {
  return {
    keepLast:
      given.keepLast === undefined
        ? null
        : checkPositiveInteger(given.keepLast, argument('keepLast')),
    olderThan:
      given.olderThan === undefined ? null : checkDuration(given.olderThan, argument('olderThan')),
  };
}

/** A prune rule as of `now`: the cutoff `olderThan` milliseconds before it. */
function ruleAt(parts: { keepLast: number | null; olderThan: number | null }, now: number) {
  return {
    keepLast: parts.keepLast,
    createdBefore: parts.olderThan === null ? null : now - parts.olderThan,
  };
}

/** The options of `prune`, checked: the rule as of `now`. */
export function checkPruneOptions(options: unknown, now: number): PruneRule {
  const given = checkOptions(
    options as PruneOptions,
    'options',
    ['keepLast', 'olderThan'],
    'prune()',
  );
  const parts = checkRuleParts(given, (name) => name);
  if (parts.keepLast === null && parts.olderThan === null) {
    throw invalidArgument(
      'options',
      'prune() needs keepLast, olderThan or both (for example { keepLast: 20 }); nothing was removed.',
    );
  }
  return ruleAt(parts, now);
}

/**
 * The `retention` store option, checked (undefined when not given): a function that gives the
 * rule to apply after writing `seq`, or null when this write does not prune.
 */
export function checkRetention(
  value: unknown,
): ((seq: number, now: number) => PruneRule | null) | undefined {
  if (value === undefined) return undefined;
  const given = checkOptions(
    value as RetentionPolicy,
    'retention',
    ['keepLast', 'olderThan'],
    "the store's option",
  );
  const parts = checkRuleParts(given, (name) => `retention.${name}`);
  if (parts.keepLast === null && parts.olderThan === null) {
    throw invalidArgument(
      'retention',
      'retention needs keepLast, olderThan or both (for example { keepLast: 50 }).',
    );
  }
  return (seq, now) => (seq % RETENTION_INTERVAL === 0 ? ruleAt(parts, now) : null);
}

/** Delete idle sessions and prune the others, across the whole store, a page at a time. */
export async function sweep(
  backend: CompleteBackend,
  run: Runner,
  options: SweepOptions | undefined,
): Promise<SweepResult> {
  const opts = checkOptions(
    options,
    'options',
    ['idleFor', 'keepLast', 'olderThan', 'dryRun', 'signal', 'onProgress'],
    'sweep()',
  );
  const idleFor = opts.idleFor === undefined ? null : checkDuration(opts.idleFor, 'idleFor');
  const parts = checkRuleParts(opts, (name) => name);
  if (opts.dryRun !== undefined && typeof opts.dryRun !== 'boolean') {
    throw invalidArgument('dryRun', `dryRun must be true or false, got ${describe(opts.dryRun)}.`);
  }
  const dryRun = opts.dryRun === true;
  const signal = checkSignal(opts.signal, 'signal');
  if (opts.onProgress !== undefined && typeof opts.onProgress !== 'function') {
    throw invalidArgument('onProgress', 'onProgress must be a function.');
  }
  const prunes = parts.keepLast !== null || parts.olderThan !== null;
  if (idleFor === null && !prunes) {
    throw invalidArgument(
      'options',
      'sweep() needs idleFor, keepLast, olderThan or a mix (for example { idleFor: 30 * 86_400_000 }); nothing was removed.',
    );
  }
  signal?.throwIfAborted();

  const now = Date.now();
  const idleBefore = idleFor === null ? null : now - idleFor;
  const rule = prunes ? ruleAt(parts, now) : null;
  const progress: SweepProgress = { walked: 0, sessions: 0, checkpoints: 0 };
  const { report, reportingStop } = progressReports(progress, opts.onProgress?.bind(opts));

  const removeAll = async (): Promise<void> => {
    const batch = backend.deleteIdleBatch?.bind(backend);
    // Whether the walk below still has idle sessions to delete, one at a time.
    let deletesIdle = idleBefore !== null;
    if (idleBefore !== null && !dryRun && batch !== undefined) {
      for (;;) {
        signal?.throwIfAborted();
        const done = await run(() => batch({ idleBefore, limit: SWEEP_PAGE }));
        if (done.sessions === 0) break;
        progress.walked += done.sessions;
        progress.sessions += done.sessions;
        progress.checkpoints += done.checkpoints;
        report();
      }
      // Every idle session without a pin is gone; what is left to do is pruning.
      if (rule === null) return;
      deletesIdle = false;
    }

    if (!backend.capabilities.listSessions)
      throw unsupported(backend.name, 'sweep()', 'listSessions');
    // Sessions come newest first. With nothing to prune, only the idle ones matter: the walk
    // starts just below idleBefore, where they begin. Neither a prune nor a deletion moves a
    // session the walk has still to reach, so each page goes on from the last one's end.
    let after: SessionPosition | null =
      rule === null && idleBefore !== null ? { updatedAt: idleBefore, sessionId: '' } : null;
    const pruneBatch = backend.pruneBatch?.bind(backend);
    for (;;) {
      signal?.throwIfAborted();
      const position = after;
      const page = await run(() =>
        backend.sessions({ after: position, limit: SWEEP_PAGE, prefix: '' }),
      );
      // The page's sessions that stay, to prune: in one backend call where it has pruneBatch,
      // which commits them together, else one prune (and one commit) a session.
      const kept: string[] = [];
      for (const session of page) {
        signal?.throwIfAborted();
        const { sessionId } = session;
        progress.walked++;
        if (deletesIdle && idleBefore !== null && session.updatedAt < idleBefore) {
          const decided = await run(() => backend.deleteIdle(sessionId, idleBefore, dryRun));
          if (decided.status === 'deleted') {
            progress.sessions++;
            progress.checkpoints += decided.checkpoints;
            continue;
          }
        }
        if (rule === null) continue;
        if (pruneBatch) kept.push(sessionId);
        else progress.checkpoints += await run(() => backend.prune(sessionId, rule, dryRun));
      }
      if (rule !== null && pruneBatch && kept.length > 0) {
        signal?.throwIfAborted();
        progress.checkpoints += await run(() => pruneBatch(kept, rule, dryRun));
      }
      report();
      if (page.length < SWEEP_PAGE) break;
      const last = page.at(-1)!;
      after = { updatedAt: last.updatedAt, sessionId: last.sessionId };
    }
  };

  await reportingStop(removeAll);
  return { sessions: progress.sessions, checkpoints: progress.checkpoints };
}
